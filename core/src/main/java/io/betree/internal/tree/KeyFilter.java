package io.betree.internal.tree;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/**
 * A Bloom filter over the keys of one basement. It is kept in the basement's leaf, which the cache
 * holds long after the basement itself is gone, so that a point read of a key the basement lacks
 * usually reads nothing. It never answers "absent" for a key the basement holds in any row; after
 * rows are dropped it may still answer "maybe" for their keys, until it is rebuilt.
 *
 * <p>Ten bits per key and six probes: about 0.8% of misses still read the basement. A filter is
 * sized for its basement's rows plus an eighth more ({@link #SPARE_DIVISOR}), so that keys added
 * one at a time (a flush, the sequential path) fill it for a while before it is rebuilt from the
 * basement; the basement the sequential path fills and leaves gets one with no room to spare.
 *
 * <p>The bits live in node memory, so they count against the cache's budget like node contents:
 * in a buffer of the filter's own once built or rebuilt, or, as read, in the leaf's stored image,
 * which the leaf keeps (one allocation per leaf read, not one per basement). On disk: probe count (1 byte), keys added (4), 64-bit word count (4), then the words. A filter
 * of no words answers "maybe" for every key.
 *
 * <p>Not thread-safe: guarded, like the rest of its leaf, by the leaf's latch.
 */
final class KeyFilter {
    static final int BITS_PER_KEY = 10;
    static final int PROBES = 6;
    private static final int MIN_KEYS = 16;
    /**
     * A filter built for a basement that keys still join has room for {@code rows / SPARE_DIVISOR}
     * keys beyond its rows. The filters are most of a leaf, and the leaves must stay cached for
     * misses to read nothing: with a quarter to spare, point misses of the 64 MiB small-cache run
     * made 108,585/s warm and 64,706/s cold; with an eighth, 561,578 and 112,566 (with none,
     * 386,486 and 116,274, but the basement the sequential path fills would be rebuilt at every
     * row). The iiBench load spent 5% more CPU a row on the rebuilds. One run each, 2026-11-26.
     */
    static final int SPARE_DIVISOR = 8;
    private static final int MAX_PROBES = 30;

    private final NodeMemory memory;
    private ByteBuf words;
    /** Where the words start in {@code words}. */
    private final int base;
    /** Whether {@code words} is this filter's own, to release with it (else its leaf's image). */
    private final boolean owned;
    private final int wordCount;
    private final int probes;
    private final int capacity;
    private int added;

    private KeyFilter(NodeMemory memory, ByteBuf words, int base, boolean owned, int wordCount, int probes, int added) {
        this.memory = memory;
        this.words = words;
        this.base = base;
        this.owned = owned;
        this.wordCount = wordCount;
        this.probes = probes;
        this.capacity = (int) Math.min(Integer.MAX_VALUE, (long) wordCount * 64 / BITS_PER_KEY);
        this.added = added;
    }

    /** A filter over every key of {@code basement}, with room to spare ({@link #SPARE_DIVISOR}). */
    static KeyFilter of(NodeMemory memory, Basement basement) {
        return of(memory, basement, true);
    }

    /**
     * A filter over every key of {@code basement}, with room for more keys ({@link #SPARE_DIVISOR})
     * when {@code spare} (for a basement that keys still join), or none.
     */
    static KeyFilter of(NodeMemory memory, Basement basement, boolean spare) {
        int rows = basement.count();
        int keys = Math.max(MIN_KEYS, spare ? rows + rows / SPARE_DIVISOR : rows);
        int wordCount = (int) Math.min(Integer.MAX_VALUE / 8, ((long) keys * BITS_PER_KEY + 63) / 64);
        // Built on the heap and stored in one pass: set bit by bit through the node buffer's
        // accessors (a reference-count check and two bounds checks each), the builds were a fifth
        // of the CPU of a 16-writer time series, whose basements' filters fill and are rebuilt often.
        long[] bits = new long[wordCount];
        int added = 0;
        long previous = 0;
        for (int p = 0; p < rows; p++) {
            long h = basement.keyHash(p);
            // Versions of one key sit side by side: add each key once (equal hashes of two keys
            // only make the count a little low, never lose a key).
            if (p == 0 || h != previous) {
                for (int i = 0; i < PROBES; i++) {
                    long bit = probe(h, i, wordCount);
                    bits[(int) (bit >>> 6)] |= 1L << bit;
                }
                added++;
            }
            previous = h;
        }
        ByteBuf words = memory.allocate(wordCount * 8);
        for (long word : bits) {
            words.writeLong(word);
        }
        return new KeyFilter(memory, words, 0, true, wordCount, PROBES, added);
    }

    /**
     * Parses a stored filter from {@code in}, whose bytes it goes on using in place: {@code in} must
     * outlive it, and adds write into it.
     *
     * @throws IllegalArgumentException if the bytes cannot be a filter
     */
    static KeyFilter read(NodeMemory memory, ByteBuf in) {
        int probes = in.readUnsignedByte();
        int added = in.readInt();
        int wordCount = in.readInt();
        if (probes < 1 || probes > MAX_PROBES || added < 0 || wordCount < 0 || wordCount > in.readableBytes() / 8) {
            throw new IllegalArgumentException("impossible key filter (" + probes + " probes, " + added
                    + " keys, " + wordCount + " words)");
        }
        int base = in.readerIndex();
        in.skipBytes(wordCount * 8);
        return new KeyFilter(memory, in, base, false, wordCount, probes, added);
    }

    /** Bytes {@link #write} produces. */
    int serializedSize() {
        return 9 + wordCount * 8;
    }

    /** Writes the stored form to {@code out}. */
    void write(ByteBuf out) {
        out.writeByte(probes).writeInt(added).writeInt(wordCount);
        out.writeBytes(words, base, wordCount * 8);
    }

    /**
     * This filter if its words are its own, else a copy that owns them (this one is then dropped
     * without release): for a filter that moves to another leaf than the one whose image it uses.
     */
    KeyFilter ownCopy() {
        if (owned) {
            return this;
        }
        ByteBuf own = memory.allocate(Math.max(1, wordCount * 8));
        own.writeBytes(words, base, wordCount * 8);
        return new KeyFilter(memory, own, 0, true, wordCount, probes, added);
    }

    /** Node memory this filter holds of its own: none when its words are in its leaf's image. */
    long memoryBytes() {
        return owned ? words.capacity() : 0;
    }

    /** Returns the bits it owns to node memory; the filter is unusable afterwards. */
    void release() {
        if (owned) {
            memory.release(words);
        }
        words = null;
    }

    /** Keys added, including those whose rows are gone. */
    int added() {
        return added;
    }

    /**
     * Adds a key by its {@link #hash}; false, adding nothing, when the filter is full and must be
     * rebuilt from its basement instead.
     */
    boolean tryAdd(long hash) {
        if (added >= capacity) {
            return false;
        }
        set(hash);
        added++;
        return true;
    }

    /** False only if no key with this {@link #hash} was ever added. */
    boolean mayContain(long hash) {
        if (wordCount == 0) {
            return true;
        }
        for (int i = 0; i < probes; i++) {
            long bit = probe(hash, i, wordCount);
            if ((words.getLong(wordOffset(bit)) & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }

    private void set(long hash) {
        for (int i = 0; i < probes; i++) {
            long bit = probe(hash, i, wordCount);
            int at = wordOffset(bit);
            words.setLong(at, words.getLong(at) | (1L << bit));
        }
    }

    /**
     * Bit {@code i} of a key's probes in a filter of {@code wordCount} words (docs/format.md):
     * (h1 + i * h2) mod 2^32, scaled to the bit count.
     */
    private static long probe(long hash, int i, int wordCount) {
        int h1 = (int) hash;
        int h2 = (int) (hash >>> 32);
        return (((h1 + i * h2) & 0xffffffffL) * ((long) wordCount * 64)) >>> 32;
    }

    /** Where in {@code words} the word holding {@code bit} starts. */
    private int wordOffset(long bit) {
        return base + (int) (bit >>> 6) * 8;
    }

    // ---- key hashing: stored filters depend on it, so it must never change for a format version ----

    private static final long OFFSET_BASIS = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;

    /** The hash of a key, as {@link #hash(ByteBuffer, int, int)} computes it for stored keys. */
    static long hash(byte[] key) {
        long h = OFFSET_BASIS;
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * PRIME;
        }
        return finish(h);
    }

    /** The hash of the {@code length} key bytes at {@code offset} of {@code buf}. */
    static long hash(ByteBuffer buf, int offset, int length) {
        long h = OFFSET_BASIS;
        for (int i = 0; i < length; i++) {
            h = (h ^ (buf.get(offset + i) & 0xff)) * PRIME;
        }
        return finish(h);
    }

    /** Spreads every input bit over the whole word: both halves of the hash pick probe bits. */
    private static long finish(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        return h ^ (h >>> 33);
    }
}
