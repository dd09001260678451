package io.betree;

import io.betree.internal.tree.Keys;
import java.util.Arrays;
import java.util.Collections;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * One transaction's pending writes to one index: the latest value per key ({@link Transaction#DELETED}
 * for a delete). Writes and point lookups go through a hash table; the sorted view that scans need is
 * built on the first scan and kept up to date from then on. A sorted map on every write was 15% of
 * the committing thread's time in an insert-heavy load, and most transactions never scan.
 *
 * <p>The writes sit in parallel arrays in the order their keys were first written, found through
 * an open-addressing table of positions: no object per write beyond the key and value. A linked hash
 * map made two more (its entry and a key wrapper), 64 bytes a write; with 16 writers, the live write
 * sets of their open transactions made each young collection copy 2.5 times as long as with one.
 *
 * <p>Not thread-safe, as the transaction that owns it. Keys and values are owned by the set (the
 * caller passes copies).
 */
final class WriteSet {
    private static final int INITIAL_CAPACITY = 16;
    /** The multiplier of Fibonacci hashing: spreads similar keys' hashes over the table. */
    private static final int SPREAD = 0x9E3779B9;

    private byte[][] keys = new byte[INITIAL_CAPACITY][];
    private byte[][] values = new byte[INITIAL_CAPACITY][];
    private int[] hashes = new int[INITIAL_CAPACITY];
    private int size;
    /** Position + 1 of the write whose key hashes here, 0 if none; a power of two, at most half full. */
    private int[] table = new int[2 * INITIAL_CAPACITY];
    /** The same writes in key order, once a scan asked for them; null until then. */
    private TreeMap<byte[], byte[]> sorted;

    /** Records {@code value} (or {@link Transaction#DELETED}) as the latest write of {@code key}. */
    void put(byte[] key, byte[] value) {
        int hash = Arrays.hashCode(key);
        int slot = find(key, hash);
        int at = table[slot] - 1;
        if (at >= 0) {
            values[at] = value;
        } else {
            if (2 * (size + 1) > table.length) {
                rehash(2 * table.length);
                slot = find(key, hash);
            }
            if (size == keys.length) {
                keys = Arrays.copyOf(keys, 2 * size);
                values = Arrays.copyOf(values, 2 * size);
                hashes = Arrays.copyOf(hashes, 2 * size);
            }
            keys[size] = key;
            values[size] = value;
            hashes[size] = hash;
            table[slot] = ++size;
        }
        if (sorted != null) {
            sorted.put(key, value);
        }
    }

    /** The latest write of {@code key}, {@link Transaction#DELETED}, or null if none. */
    byte[] get(byte[] key) {
        int at = table[find(key, Arrays.hashCode(key))] - 1;
        return at < 0 ? null : values[at];
    }

    /** The table slot holding {@code key}'s position, or the empty slot where it would go. */
    private int find(byte[] key, int hash) {
        int mask = table.length - 1;
        for (int slot = slotOf(hash); ; slot = (slot + 1) & mask) {
            int at = table[slot] - 1;
            if (at < 0 || hashes[at] == hash && Arrays.equals(keys[at], key)) {
                return slot;
            }
        }
    }

    /** Keys written. */
    int size() {
        return size;
    }

    /** The writes in key order, read-only; kept up to date by later writes. */
    NavigableMap<byte[], byte[]> sorted() {
        if (sorted == null) {
            sorted = new TreeMap<>(Keys::compare);
            for (int i = 0; i < size; i++) {
                sorted.put(keys[i], values[i]);
            }
        }
        return Collections.unmodifiableNavigableMap(sorted);
    }

    /**
     * Calls {@code action} with each key and its latest write, in the order the keys were first
     * written: an ascending load thus reaches the tree in ascending order, which keeps it on the
     * tree's sequential-insert path.
     */
    void forEach(BiConsumer<byte[], byte[]> action) {
        for (int i = 0; i < size; i++) {
            action.accept(keys[i], values[i]);
        }
    }

    private int slotOf(int hash) {
        return (hash * SPREAD) >>> (Integer.SIZE - Integer.numberOfTrailingZeros(table.length));
    }

    private void rehash(int capacity) {
        table = new int[capacity];
        int mask = capacity - 1;
        for (int i = 0; i < size; i++) {
            int slot = slotOf(hashes[i]);
            while (table[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            table[slot] = i + 1;
        }
    }
}
