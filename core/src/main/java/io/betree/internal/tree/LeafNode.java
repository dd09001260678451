package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A leaf: the ordered list of its basements (block numbers, sizes and key filters) and the pivot
 * keys between them. The entries themselves live in the {@link Basement} blocks, which are cached
 * on their own; the filters stay with the leaf, so a point read of a key that a basement lacks
 * usually ends here.
 *
 * <p>On-disk form: tag {@code 'L'}, basement count (4 bytes), per basement its block number (8) and
 * size (4), then count-1 pivots as key length (2) and key bytes, then per basement a byte 1 and
 * its {@link ChunkMap} or a byte 0 when none is known, then per basement its {@link KeyFilter}.
 * Pivot {@code i} is the smallest key that basement {@code i+1} may hold. A basement's chunk map
 * is a hint that may be older than the basement ({@link ChunkMap.Slot}); a leaf is not rewritten
 * for a new one.
 *
 * <p>The filters are most of a leaf's memory (about 100 KB for 64 K rows, the rest a few KB). A
 * clean leaf the cache would evict first {@linkplain #shed sheds} them instead and keeps its basement
 * list, which every read of the leaf needs; they are read back from the leaf's block when next
 * needed ({@link #filtersHeld}, {@link FilterSource}), by any method here that uses them. The chunk
 * maps of a leaf read from disk stay in its stored image until a read needs one; parsed ones are
 * shed too, apart from the filters, and come back from the image while it is held.
 *
 * <p>The lists are read directly; they change only through the methods here, which keep a basement's
 * block, size and filter together. Not thread-safe, except that readers sharing the leaf's latch may
 * read shed filters back at once: callers hold the leaf's latch.
 */
final class LeafNode extends CacheEntry {
    static final byte TAG = 'L';

    private final BlockCompressor codec;
    private final NodeMemory memory;
    final List<byte[]> pivots;
    final List<Long> basements;
    final List<Integer> basementBytes;
    final List<KeyFilter> filters;
    /** Per basement, where its stored chunks lie; kept when the filters are shed. */
    final List<ChunkMap.Slot> chunkSlots;
    /** The stored image this leaf was read from, which holds the words of the filters read with it; or null. */
    private ByteBuf image;
    private final FilterSource source;
    /** Set while the filters are shed; written with {@link #reading} held or by the evictor alone. */
    private volatile boolean shed;
    /**
     * Whether the filters saved a read (a miss), or a read of a basement not in the cache asked for
     * its map, since the evictor last shed that part of this leaf.
     */
    private volatile boolean filtersUsed;
    private volatile boolean mapsUsed;
    private final ReentrantLock reading = new ReentrantLock();

    /** Where a leaf that shed its filters reads them back from. */
    interface FilterSource {
        /**
         * The leaf stored in {@code block}, parsed; the caller takes its filters and image.
         *
         * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
         */
        LeafNode readStored(long block);

        /** Tells the cache that {@code leaf}, pinned by a reader, grew by reading its filters back. */
        void grew(LeafNode leaf);
    }

    LeafNode(long blockNumber, BlockCompressor codec, NodeMemory memory, FilterSource source, List<byte[]> pivots,
            List<Long> basements, List<Integer> sizes, List<ChunkMap.Slot> chunkSlots, List<KeyFilter> filters) {
        super(blockNumber);
        this.codec = codec;
        this.memory = memory;
        this.source = source;
        this.pivots = pivots;
        this.basements = basements;
        this.basementBytes = sizes;
        this.chunkSlots = chunkSlots;
        this.filters = filters;
    }

    /**
     * Parses a stored leaf from {@code in}, which it takes: the filters go on using its bytes (the
     * leaf releases it, or this method when it throws). Throws {@link IllegalArgumentException} or
     * IndexOutOfBounds on bad bytes.
     */
    static LeafNode read(long blockNumber, ByteBuf in, BlockCompressor codec, NodeMemory memory, FilterSource source) {
        try {
            LeafNode leaf = parse(blockNumber, in, codec, memory, source);
            leaf.image = in;
            return leaf;
        } catch (RuntimeException e) {
            memory.release(in);
            throw e;
        }
    }

    private static LeafNode parse(long blockNumber, ByteBuf in, BlockCompressor codec, NodeMemory memory,
            FilterSource source) {
        if (in.readByte() != TAG) {
            throw new IllegalArgumentException("not a leaf node");
        }
        int n = in.readInt();
        if (n < 1 || n > in.readableBytes() / 21) {
            throw new IllegalArgumentException("impossible basement count " + n);
        }
        List<Long> blocks = new ArrayList<>(n);
        List<Integer> sizes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            blocks.add(in.readLong());
            sizes.add(in.readInt());
        }
        List<byte[]> pivots = new ArrayList<>(n - 1);
        for (int i = 0; i < n - 1; i++) {
            byte[] k = new byte[in.readUnsignedShort()];
            in.readBytes(k);
            if (i > 0 && Keys.compare(pivots.get(i - 1), k) >= 0) {
                throw new IllegalArgumentException("leaf pivots out of order");
            }
            pivots.add(k);
        }
        List<ChunkMap.Slot> slots = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byte known = in.readByte();
            if (known != 0 && known != 1) {
                throw new IllegalArgumentException("bad chunk map marker " + known);
            }
            if (known == 1) {
                ChunkMap.skip(in); // parsed when first used (mapInImage): the image holds them meanwhile
            }
            slots.add(new ChunkMap.Slot(null));
        }
        List<KeyFilter> filters = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            filters.add(KeyFilter.read(memory, in));
        }
        if (in.isReadable()) {
            throw new IllegalArgumentException("trailing bytes after leaf node");
        }
        return new LeafNode(blockNumber, codec, memory, source, pivots, blocks, sizes, slots, filters);
    }

    /** Whether the filters are in memory: false after {@link #shed}, until something reads them back. */
    boolean filtersHeld() {
        return !shed;
    }

    /**
     * Drops the chunk maps or the filters of this clean leaf to free their memory, keeping the
     * basement list; false when there is nothing to drop. Only the evictor calls it, with the leaf
     * to itself (claimed, so unpinned and unlatched).
     */
    @Override
    protected boolean shed() {
        boolean held = !shed && !(image == null && filters.isEmpty());
        // What reads have not used since the last time goes first: the filters of a leaf that
        // only hits reach, the maps of one that only misses reach; else the maps, the smaller part.
        // Only maps that the stored image holds as they are go, to be parsed from it again when
        // needed; a leaf written meanwhile takes them from the image too (serializedSizeBound).
        if ((!mapsUsed || filtersUsed || !held) && shedMapsTheImageHolds()) {
            mapsUsed = false;
            return true;
        }
        if (!held) {
            return false;
        }
        if (mapsUsed) { // the maps not parsed yet go with the image otherwise
            parseMapsInImage(0, chunkSlots.size());
        }
        filtersUsed = false;
        filters.forEach(KeyFilter::release);
        filters.clear();
        memory.release(image);
        image = null;
        shed = true;
        return true;
    }

    /** Reads shed filters back from the leaf's block; a no-op when they are held. */
    private void holdFilters() {
        if (!shed) {
            return;
        }
        reading.lock();
        try {
            if (!shed) {
                return; // another reader read them back
            }
            LeafNode stored = source.readStored(blockNumber());
            if (!stored.basements.equals(basements)) {
                stored.releaseMemory();
                throw new IllegalStateException("leaf " + blockNumber() + " shed its filters while its block differed");
            }
            filters.addAll(stored.filters);
            stored.filters.clear();
            image = stored.image;
            stored.image = null;
            shed = false;
            source.grew(this);
        } finally {
            reading.unlock();
        }
    }

    /** The number of filters, one per basement; reads shed filters back. */
    int filterCount() {
        holdFilters();
        return filters.size();
    }

    /**
     * The map of basement {@code b}'s stored chunks, or null when none is known: its slot's, else
     * the stored image's, which the slot then keeps.
     */
    ChunkMap chunkMap(int b) {
        mapsUsed = true;
        ChunkMap.Slot slot = chunkSlots.get(b);
        ChunkMap map = slot.map();
        if (map == null) {
            map = mapInImage(basements.get(b));
            if (map != null) {
                slot.set(map);
            }
        }
        return map;
    }

    /** Empties the slots whose map the stored image holds too (same stamp); true if any. */
    private boolean shedMapsTheImageHolds() {
        if (image == null || chunkSlots.stream().allMatch(slot -> slot.map() == null)) {
            return false;
        }
        ImageMaps stored = imageMaps();
        boolean any = false;
        for (int b = 0; stored != null && b < chunkSlots.size(); b++) {
            ChunkMap map = chunkSlots.get(b).map();
            int k = stored.indexOf(basements.get(b));
            if (map != null && k >= 0 && stored.stamp(k) == map.stamp) {
                chunkSlots.get(b).set(null);
                any = true;
            }
        }
        return any;
    }

    /** Gives the slots of basements {@code [from, to)} that have no map the one in the stored image, if any. */
    private void parseMapsInImage(int from, int to) {
        for (int b = from; b < to; b++) {
            if (chunkSlots.get(b).map() == null) {
                chunkSlots.get(b).set(mapInImage(basements.get(b)));
            }
        }
    }

    /**
     * The map the stored image holds for basement {@code block}, or null: none there, or no image.
     * Readers sharing the leaf's subtree latch may call it at once; the image changes only from
     * none to one while they may (the evictor drops it with the leaf to itself). A map is a hint,
     * so one the image cannot give is none rather than an error.
     */
    private ChunkMap mapInImage(long block) {
        ByteBuf img = image;
        if (img == null) {
            return null;
        }
        try {
            int n = img.getInt(1);
            ByteBuf in = mapsOf(img);
            for (int i = 0; i < n; i++) {
                boolean known = in.readByte() == 1;
                if (img.getLong(5 + 12 * i) == block) {
                    return known ? ChunkMap.read(in) : null;
                }
                if (known) {
                    ChunkMap.skip(in);
                }
            }
        } catch (RuntimeException e) {
            return null;
        }
        return null;
    }

    /** A view of stored image {@code img} from its first chunk map on. */
    private static ByteBuf mapsOf(ByteBuf img) {
        int n = img.getInt(1);
        int at = 5 + 12 * n;
        for (int i = 0; i < n - 1; i++) {
            at += 2 + img.getUnsignedShort(at);
        }
        return img.duplicate().readerIndex(at);
    }

    /** Index of the basement that holds {@code key}. */
    int basementFor(byte[] key) {
        return InternalNode.route(pivots, key);
    }

    /**
     * False only if basement {@code b} holds no row of the key with this {@link KeyFilter#hash}.
     * Reads shed filters back: a caller that would rather not checks {@link #filtersHeld} first.
     */
    boolean mayContain(int b, long keyHash) {
        holdFilters();
        if (filters.get(b).mayContain(keyHash)) {
            return true;
        }
        filtersUsed = true; // it saved a read
        return false;
    }

    /** Total bytes of all basements. */
    long totalBytes() {
        long sum = 0;
        for (int b : basementBytes) {
            sum += b;
        }
        return sum;
    }

    // ---- changes: each keeps a basement's block, size and filter together ----

    /** Records basement {@code b} (pinned) after any change to its rows: its size, and a filter rebuilt. */
    void rebuilt(int b, Basement basement) {
        record(b, basement, true);
    }

    /**
     * Records basement {@code b} after the sorted messages {@code [from, to)} of {@code msgs} were
     * applied to it: its size, and their keys added to its filter (rebuilt once full).
     */
    void applied(int b, Basement basement, MessageBuffer msgs, int from, int to) {
        holdFilters();
        basementBytes.set(b, basement.bytes());
        KeyFilter filter = filters.get(b);
        for (int m = from; m < to; m++) {
            if (!filter.tryAdd(msgs.keyHashAt(m))) {
                rebuilt(b, basement);
                return;
            }
        }
    }

    /**
     * Records basement {@code b} (pinned) as full for good, as the sequential path leaves it: its
     * size, and a filter rebuilt with no room for more keys.
     */
    void sealed(int b, Basement basement) {
        record(b, basement, false);
    }

    private void record(int b, Basement basement, boolean spare) {
        holdFilters();
        basementBytes.set(b, basement.bytes());
        filters.set(b, KeyFilter.of(memory, basement, spare)).release();
    }

    /** Records {@code key} as appended to basement {@code b}: its size, and the key in its filter. */
    void appended(int b, Basement basement, byte[] key) {
        holdFilters();
        basementBytes.set(b, basement.bytes());
        if (!filters.get(b).tryAdd(KeyFilter.hash(key))) {
            rebuilt(b, basement);
        }
    }

    /** Inserts {@code right}, split off the top of basement {@code b}, just after it. */
    void insertAfter(int b, Basement right) {
        holdFilters();
        pivots.add(b, right.key(0));
        basements.add(b + 1, right.blockNumber());
        basementBytes.add(b + 1, right.bytes());
        ChunkMap.Slot slot = new ChunkMap.Slot(null);
        chunkSlots.add(b + 1, slot);
        right.attach(slot);
        filters.add(b + 1, KeyFilter.of(memory, right));
    }

    /**
     * Removes basement {@code b} and pivot {@code pivot} (one of the two around it), releasing the
     * basement's filter; returns its block, which the caller frees.
     */
    long remove(int b, int pivot) {
        holdFilters();
        pivots.remove(pivot);
        basementBytes.remove(b);
        chunkSlots.remove(b);
        filters.remove(b).release();
        return basements.remove(b);
    }

    /**
     * Moves basements {@code [start, end)} and the pivots between them into a new leaf made by
     * {@code maker}; the pivot before {@code start} goes too, and is returned.
     */
    byte[] moveTail(int start, LeafMaker maker) {
        holdFilters();
        int end = basements.size();
        parseMapsInImage(start, end); // the image stays with this leaf
        byte[] separator = pivots.get(start - 1);
        List<KeyFilter> moved = new ArrayList<>(end - start);
        for (KeyFilter f : filters.subList(start, end)) {
            moved.add(f.ownCopy()); // this leaf's image stays with this leaf
        }
        maker.make(new ArrayList<>(pivots.subList(start, end - 1)), new ArrayList<>(basements.subList(start, end)),
                new ArrayList<>(basementBytes.subList(start, end)), new ArrayList<>(chunkSlots.subList(start, end)),
                moved);
        pivots.subList(start - 1, end - 1).clear();
        basements.subList(start, end).clear();
        basementBytes.subList(start, end).clear();
        chunkSlots.subList(start, end).clear();
        filters.subList(start, end).clear();
        return separator;
    }

    /** Takes every basement of {@code right}, whose keys sort after {@code separator} and all of this leaf's. */
    void absorb(byte[] separator, LeafNode right) {
        holdFilters();
        right.holdFilters();
        right.parseMapsInImage(0, right.basements.size()); // the right leaf's image goes with it
        pivots.add(separator);
        pivots.addAll(right.pivots);
        basements.addAll(right.basements);
        basementBytes.addAll(right.basementBytes);
        chunkSlots.addAll(right.chunkSlots);
        for (KeyFilter f : right.filters) {
            filters.add(f.ownCopy()); // the right leaf's image goes with it
        }
        right.filters.clear(); // now this leaf's: freeing the right one leaves them
    }

    /** Makes a leaf from lists it then owns. */
    interface LeafMaker {
        void make(List<byte[]> pivots, List<Long> basements, List<Integer> sizes, List<ChunkMap.Slot> chunkSlots,
                List<KeyFilter> filters);
    }

    @Override
    public BlockCompressor compressor() {
        return codec;
    }

    /**
     * The filters' and image's memory, and an estimate of the heap the basement list holds: shed
     * leaves must count for something, or the cache would keep any number of them.
     */
    @Override
    public long memoryBytes() {
        long bytes = 64 + (image == null ? 0 : image.capacity()) + basements.size() * 48L;
        for (byte[] p : pivots) {
            bytes += 24 + p.length;
        }
        for (ChunkMap.Slot slot : chunkSlots) {
            ChunkMap map = slot.map();
            bytes += 16 + (map == null ? 0 : map.memoryBytes());
        }
        for (KeyFilter f : filters) {
            bytes += f.memoryBytes();
        }
        return bytes;
    }

    @Override
    public int serializedSizeBound() {
        holdFilters(); // a shed leaf is clean and not written back; a checkpoint may still ask
        int size = 5 + basements.size() * 12;
        for (byte[] p : pivots) {
            size += 2 + p.length;
        }
        ImageMaps stored = imageMaps();
        for (int b = 0; b < chunkSlots.size(); b++) {
            ChunkMap map = chunkSlots.get(b).map();
            int k = map != null || stored == null ? -1 : stored.indexOf(basements.get(b));
            size += 1 + (map != null ? map.serializedSize() : k >= 0 ? stored.lengths[k] : 0);
        }
        for (KeyFilter f : filters) {
            size += f.serializedSize();
        }
        return size;
    }

    /**
     * Where the stored image holds each of its basements' maps, found without parsing them (a leaf
     * of a write load is stored again and again, its maps mostly still in the image); null without
     * an image, or if the image cannot give them.
     */
    private ImageMaps imageMaps() {
        ByteBuf img = image;
        if (img == null) {
            return null;
        }
        try {
            int n = img.getInt(1);
            ImageMaps maps = new ImageMaps(img, new long[n], new int[n], new int[n]);
            ByteBuf in = mapsOf(img);
            for (int i = 0; i < n; i++) {
                maps.blocks[i] = img.getLong(5 + 12 * i);
                if (in.readByte() == 1) {
                    maps.offsets[i] = in.readerIndex();
                    ChunkMap.skip(in);
                    maps.lengths[i] = in.readerIndex() - maps.offsets[i];
                }
            }
            return maps;
        } catch (RuntimeException e) {
            return null; // a map is a hint
        }
    }

    /** The maps of a stored image: per basement its block, and its map's offset and length (0: none). */
    private record ImageMaps(ByteBuf image, long[] blocks, int[] offsets, int[] lengths) {
        /** The index of basement {@code block}'s map, or -1 if the image has none. */
        int indexOf(long block) {
            for (int i = 0; i < blocks.length; i++) {
                if (blocks[i] == block) {
                    return lengths[i] > 0 ? i : -1;
                }
            }
            return -1;
        }

        /** The stamp of map {@code k} (after its codec id). */
        long stamp(int k) {
            return image.getLong(offsets[k] + 1);
        }
    }

    @Override
    public void serialize(ByteBuf out) {
        holdFilters();
        out.writeByte(TAG).writeInt(basements.size());
        for (int i = 0; i < basements.size(); i++) {
            out.writeLong(basements.get(i)).writeInt(basementBytes.get(i));
        }
        for (byte[] p : pivots) {
            out.writeShort(p.length).writeBytes(p);
        }
        // Basements publish maps at any time, and two threads may serialize this leaf at once (a
        // write-back and a checkpoint's image): a map that no longer fits the bound measured is
        // left out, which only costs a whole-basement read.
        int filterBytes = 0;
        for (KeyFilter f : filters) {
            filterBytes += f.serializedSize();
        }
        // A map shed since the leaf was read, or never parsed, is copied from the stored image.
        ImageMaps stored = imageMaps();
        int n = chunkSlots.size();
        for (int b = 0; b < n; b++) {
            int room = out.maxWritableBytes() - filterBytes - (n - b);
            ChunkMap map = chunkSlots.get(b).map();
            int k = map != null || stored == null ? -1 : stored.indexOf(basements.get(b));
            if (map != null && map.serializedSize() <= room) {
                out.writeByte(1);
                map.write(out);
            } else if (k >= 0 && stored.lengths[k] <= room) {
                out.writeByte(1).writeBytes(stored.image, stored.offsets[k], stored.lengths[k]);
            } else {
                out.writeByte(0);
            }
        }
        for (KeyFilter f : filters) {
            f.write(out);
        }
    }

    @Override
    protected void releaseMemory() {
        shed = false;
        filters.forEach(KeyFilter::release);
        filters.clear();
        memory.release(image);
        image = null;
    }
}
