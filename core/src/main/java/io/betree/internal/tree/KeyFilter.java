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
 * one at a time (a flush, the sequential path) fill it for a while; the basement the sequential
 * path fills and leaves gets one with no room to spare. A filter that fills grows by a part of its
 * own ({@link #GROWTH_DIVISOR}, {@link #MAX_PARTS}) and is rebuilt from its basement only when it
 * has all its parts: a basement that keys join at every flush (a time series appends to the end of
 * each sensor's rows) was otherwise rebuilt at every eighth more, each of its rows hashed some nine
 * times before it split, and the rebuilds were a third of a flusher's time with 16 writers.
 *
 * <p>The bits live in node memory, so they count against the cache's budget like node contents:
 * in a buffer of the part's own once built or grown, or, as read, in the leaf's stored image,
 * which the leaf keeps (one allocation per leaf read, not one per basement). On disk, per part:
 * probe count (1 byte; bit 7 set when another part follows), keys added (4), 64-bit word count
 * (4), then the words. A filter of no words answers "maybe" for every key.
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
    /**
     * A filter that fills gets a part with room for a {@code 1/GROWTH_DIVISOR} of the keys it holds,
     * at {@link #GROWN_BITS_PER_KEY}, until it has {@link #MAX_PARTS} parts.
     */
    static final int GROWTH_DIVISOR = 4;
    static final int MAX_PARTS = 4;
    /**
     * Bits per key of the parts a filter grows: a key absent from the basement passes a filter if
     * it passes any part, so the grown parts are kept sparser (about 0.18% each when full) to add
     * little to the first part's 0.8%.
     */
    static final int GROWN_BITS_PER_KEY = 14;
    private static final int MAX_PROBES = 30;
    /** Set in a stored part's probe-count byte when another part of the filter follows it. */
    private static final int MORE_PARTS = 0x80;

    private final NodeMemory memory;
    private ByteBuf words;
    /** Where the words start in {@code words}. */
    private final int base;
    /** Whether {@code words} is this filter's own, to release with it (else its leaf's image). */
    private final boolean owned;
    private final int wordCount;
    private final int probes;
    /** Keys this part has room for. */
    private final int capacity;
    private int added;
    /** The part this filter grew after this one filled, or null. */
    private KeyFilter next;

    private KeyFilter(NodeMemory memory, ByteBuf words, int base, boolean owned, int wordCount, int probes, int added,
            int capacity) {
        this.memory = memory;
        this.words = words;
        this.base = base;
        this.owned = owned;
        this.wordCount = wordCount;
        this.probes = probes;
        this.capacity = capacity;
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
        return new KeyFilter(memory, words, 0, true, wordCount, PROBES, added, capacity(wordCount, BITS_PER_KEY));
    }

    /** An empty part with room for {@code keys} keys at {@link #GROWN_BITS_PER_KEY}. */
    private static KeyFilter grownPart(NodeMemory memory, int keys) {
        int wordCount = (int) Math.min(Integer.MAX_VALUE / 8, ((long) keys * GROWN_BITS_PER_KEY + 63) / 64);
        ByteBuf words = memory.allocate(wordCount * 8);
        words.writeZero(wordCount * 8);
        return new KeyFilter(memory, words, 0, true, wordCount, PROBES, 0, capacity(wordCount, GROWN_BITS_PER_KEY));
    }

    private static int capacity(int wordCount, int bitsPerKey) {
        return (int) Math.min(Integer.MAX_VALUE, (long) wordCount * 64 / bitsPerKey);
    }

    /**
     * Parses a stored filter from {@code in}, whose bytes it goes on using in place: {@code in} must
     * outlive it, and adds write into it.
     *
     * @throws IllegalArgumentException if the bytes cannot be a filter
     */
    static KeyFilter read(NodeMemory memory, ByteBuf in) {
        KeyFilter first = null;
        KeyFilter last = null;
        for (int parts = 1; ; parts++) {
            if (in.readableBytes() < 9) {
                throw new IllegalArgumentException("impossible key filter (part " + parts + " cut short)");
            }
            int flags = in.readUnsignedByte();
            int probes = flags & ~MORE_PARTS;
            int added = in.readInt();
            int wordCount = in.readInt();
            if (probes < 1 || probes > MAX_PROBES || added < 0 || wordCount < 0 || wordCount > in.readableBytes() / 8
                    || parts > MAX_PARTS) {
                throw new IllegalArgumentException("impossible key filter (part " + parts + ": " + probes + " probes, "
                        + added + " keys, " + wordCount + " words)");
            }
            int base = in.readerIndex();
            in.skipBytes(wordCount * 8);
            // The capacity of a part read counts only for the last part, the one keys are added to.
            KeyFilter part = new KeyFilter(memory, in, base, false, wordCount, probes, added,
                    capacity(wordCount, parts == 1 ? BITS_PER_KEY : GROWN_BITS_PER_KEY));
            if (first == null) {
                first = part;
            } else {
                last.next = part;
            }
            last = part;
            if ((flags & MORE_PARTS) == 0) {
                return first;
            }
        }
    }

    /** Bytes {@link #write} produces. */
    int serializedSize() {
        int size = 0;
        for (KeyFilter p = this; p != null; p = p.next) {
            size += 9 + p.wordCount * 8;
        }
        return size;
    }

    /** Writes the stored form to {@code out}. */
    void write(ByteBuf out) {
        for (KeyFilter p = this; p != null; p = p.next) {
            out.writeByte(p.probes | (p.next != null ? MORE_PARTS : 0)).writeInt(p.added).writeInt(p.wordCount);
            out.writeBytes(p.words, p.base, p.wordCount * 8);
        }
    }

    /**
     * This filter if its words are its own, else a copy that owns them (this one is then dropped
     * without release): for a filter that moves to another leaf than the one whose image it uses.
     */
    KeyFilter ownCopy() {
        KeyFilter copy = owned ? this : copyOf(this);
        if (next != null) {
            copy.next = next.ownCopy();
        }
        return copy;
    }

    private static KeyFilter copyOf(KeyFilter part) {
        ByteBuf own = part.memory.allocate(Math.max(1, part.wordCount * 8));
        own.writeBytes(part.words, part.base, part.wordCount * 8);
        return new KeyFilter(part.memory, own, 0, true, part.wordCount, part.probes, part.added, part.capacity);
    }

    /** Node memory this filter holds of its own: none for parts whose words are in its leaf's image. */
    long memoryBytes() {
        long bytes = 0;
        for (KeyFilter p = this; p != null; p = p.next) {
            bytes += p.owned ? p.words.capacity() : 0;
        }
        return bytes;
    }

    /** Returns the bits it owns to node memory; the filter is unusable afterwards. */
    void release() {
        for (KeyFilter p = this; p != null; p = p.next) {
            if (p.owned) {
                memory.release(p.words);
            }
            p.words = null;
        }
    }

    /** Keys added to all its parts, including those whose rows are gone. */
    int added() {
        int sum = 0;
        for (KeyFilter p = this; p != null; p = p.next) {
            sum += p.added;
        }
        return sum;
    }

    /** Parts: 1 until the filter first fills. */
    int parts() {
        int n = 0;
        for (KeyFilter p = this; p != null; p = p.next) {
            n++;
        }
        return n;
    }

    /**
     * Adds a key by its {@link #hash}, growing a part when the last one is full; false, adding
     * nothing, when the filter has all its parts full (or no words) and must be rebuilt from its
     * basement instead.
     */
    boolean tryAdd(long hash) {
        if (wordCount == 0) {
            return false;
        }
        KeyFilter last = this;
        int parts = 1;
        while (last.next != null) {
            last = last.next;
            parts++;
        }
        if (last.added >= last.capacity) {
            if (parts >= MAX_PARTS) {
                return false;
            }
            last.next = grownPart(memory, Math.max(MIN_KEYS, added() / GROWTH_DIVISOR));
            last = last.next;
        }
        last.set(hash);
        last.added++;
        return true;
    }

    /** False only if no key with this {@link #hash} was ever added. */
    boolean mayContain(long hash) {
        for (KeyFilter p = this; p != null; p = p.next) {
            if (p.partMayContain(hash)) {
                return true;
            }
        }
        return false;
    }

    private boolean partMayContain(long hash) {
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
