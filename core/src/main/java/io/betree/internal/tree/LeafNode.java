package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.compression.NoneCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * A leaf: the ordered list of its basements (block numbers, sizes and key filters) and the pivot
 * keys between them. The entries themselves live in the {@link Basement} blocks, which are cached
 * on their own; the filters stay with the leaf, so a point read of a key that a basement lacks
 * usually ends here.
 *
 * <p>On-disk form (docs/format.md): tag {@code 'Q'}, the lengths of the head, the filters and the
 * chunk maps (4 each) and the head's CRC32C (4), then the head: basement count (4), per basement
 * its block number (8) and size (4), then count-1 pivots as key length (2) and key bytes; then the
 * chunk maps: their CRC32C (4) and a {@link ChunkMap} entry for each basement whose stored chunks
 * the leaf knew when it was written; then per basement its {@link KeyFilter}. Pivot {@code i} is
 * the smallest key that basement {@code i+1} may hold. The block is stored uncompressed (the
 * filters are random bits), so a read that needs no filters (a scan, a hit) fetches the first few
 * KB, checked by the head's own CRC, instead of some 100 KB ({@link #readHead}); the maps come
 * with them when they fit, or are read alone when a point read of an uncached basement needs them
 * ({@link #chunkMaps}). Leaves of format version 7
 * ({@link #TAG_NO_MAPS}) have no maps; those of versions before ({@link #TAG_WHOLE}) no head length
 * or CRC either, and are read whole.
 *
 * <p>The filters are most of a leaf's memory (about 100 KB for 64 K rows, the rest a few KB). A
 * clean leaf the cache would evict first {@linkplain #shed sheds} them instead and keeps its basement
 * list, which every read of the leaf needs; a leaf read by its head alone starts shed. Shed filters
 * are read back from the leaf's block when next needed ({@link #filtersHeld}, {@link FilterSource}),
 * by any method here that uses them.
 *
 * <p>The lists are read directly; they change only through the methods here, which keep a basement's
 * block, size and filter together. Not thread-safe, except that readers sharing the leaf's latch may
 * read shed filters back at once: callers hold the leaf's latch.
 */
final class LeafNode extends CacheEntry {
    static final byte TAG = 'Q';
    /** The tag of leaves stored by format version 7: no chunk maps; still read. */
    static final byte TAG_NO_MAPS = 'P';
    /** The tag of leaves stored by format versions before 7: no head length or CRC; still read. */
    static final byte TAG_WHOLE = 'L';
    /** Bytes in front of a stored leaf's head: tag, the lengths of head, filters and maps, head CRC. */
    private static final int HEAD_START = 17;
    /** As {@link #HEAD_START}, for {@link #TAG_NO_MAPS}, which has no maps length. */
    private static final int HEAD_START_NO_MAPS = 13;
    /** Leaves are stored as they are: the filters that fill them do not compress, and the head is read alone. */
    private static final BlockCompressor STORED_RAW = Compressors.forId(NoneCompressor.ID);

    private final NodeMemory memory;
    final List<byte[]> pivots;
    final List<Long> basements;
    final List<Integer> basementBytes;
    final List<KeyFilter> filters;
    /** The stored image this leaf was read from, which holds the words of the filters read with it; or null. */
    private ByteBuf image;
    private final FilterSource source;
    /** Set while the filters are shed; written with {@link #reading} held or by the evictor alone. */
    private volatile boolean shed;
    private final ReentrantLock reading = new ReentrantLock();
    /**
     * Where the leaf's block holds its chunk maps: offset in the block's contents times 2^32 plus
     * length, or 0 when it holds none (or they did not check out). Set by each write of the leaf,
     * which may run beside readers.
     */
    private final AtomicLong mapsPlace = new AtomicLong();
    /** The chunk maps held, a view of {@link #mapsOwned}; null when not held. */
    private volatile Maps maps;
    /** The buffer the maps held live in: read alone, or gathered by a split or merge; or null. */
    private ByteBuf mapsOwned;
    /**
     * The entries the leaf's last write stored, newer than the maps held: readers take them up
     * ({@link #chunkMaps}), as the write may run beside readers of the maps held. Under {@link #reading}.
     */
    private volatile ByteBuf mapsWritten;
    /**
     * Maps a reader replaced with {@link #mapsWritten} while other readers may still look into
     * them: released once nobody can (a change, with readers shut out; a shed; the leaf's end).
     */
    private ByteBuf mapsRetired;

    /**
     * Chunk map entries ({@link ChunkMap}) at {@code [start, end)} of {@code view}, checked; entry
     * {@code i} starts at {@code entries[i]}, which is usually basement {@code i}'s.
     */
    record Maps(ByteBuffer view, int start, int end, int[] entries) {
        /** Where the entry of basement {@code block}, the leaf's basement {@code at}, starts; -1 if none. */
        int find(int at, long block) {
            if (at < entries.length && ChunkMap.block(view, entries[at]) == block) {
                return entries[at];
            }
            return ChunkMap.find(view, start, end, block);
        }
    }

    /** Where a leaf that shed its filters reads them back from, and reads its chunk maps. */
    interface FilterSource {
        /**
         * The leaf stored in {@code block}, parsed; the caller takes its filters and image.
         *
         * @throws io.betree.internal.fault.CorruptionException if the stored block is damaged
         */
        LeafNode readStored(long block);

        /**
         * Bytes {@code [from, from + length)} of {@code block}'s contents, unchecked, in a buffer the
         * caller takes; its readable bytes are none if the range is not inside the block.
         */
        ByteBuf readPart(long block, int from, int length);

        /** The newest chunk map entry written for basement {@code basement}, if still known; or null. */
        byte[] recentMap(long basement);

        /** Tells the cache that {@code leaf}, pinned by a reader, grew by reading its filters back. */
        void grew(LeafNode leaf);
    }

    LeafNode(long blockNumber, NodeMemory memory, FilterSource source, List<byte[]> pivots, List<Long> basements,
            List<Integer> sizes, List<KeyFilter> filters) {
        super(blockNumber);
        this.memory = memory;
        this.source = source;
        this.pivots = pivots;
        this.basements = basements;
        this.basementBytes = sizes;
        this.filters = filters;
    }

    /**
     * Parses a whole stored leaf from {@code in}, which it takes: the filters go on using its bytes
     * (the leaf releases it, or this method when it throws), or, when the block holds chunk maps,
     * those of a copy of the filters alone, the maps being left on disk. Throws {@link IllegalArgumentException}
     * or IndexOutOfBounds on bad bytes.
     */
    static LeafNode read(long blockNumber, ByteBuf in, NodeMemory memory, FilterSource source) {
        ByteBuf data = in;
        try {
            List<byte[]> pivots = new ArrayList<>();
            List<Long> blocks = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            int start = data.readerIndex();
            byte tag = data.readByte();
            long mapsAt = 0;
            if (tag == TAG || tag == TAG_NO_MAPS) {
                int headLength = checkedHeadLength(data, tag == TAG);
                int filtersLength = data.getInt(start + 5);
                int mapsLength = tag == TAG ? data.getInt(start + 9) : 0;
                if (mapsLength < 0 || (long) filtersLength + mapsLength != data.readableBytes() - headLength) {
                    throw new IllegalArgumentException("leaf's filters and maps take " + (data.readableBytes() - headLength)
                            + " bytes, its head says " + filtersLength + " and " + mapsLength);
                }
                readHeadFields(data.readSlice(headLength), pivots, blocks, sizes, true);
                if (mapsLength > 0) {
                    // Covered by the block's CRC here: maps that do not check out are a malformed leaf.
                    int mapsStart = data.readerIndex();
                    if (checkedMaps(NodeMemory.view(data), mapsStart, mapsLength, blocks.size()) == null) {
                        throw new IllegalArgumentException("leaf's chunk maps are malformed");
                    }
                    // A leaf read whole is read for its filters, which fill the cache as it is: the
                    // maps stay on disk until a chunk read or a write of the leaf asks (chunkMaps).
                    ByteBuf filtersOnly = memory.allocate(filtersLength);
                    filtersOnly.writeBytes(data, mapsStart + mapsLength, filtersLength);
                    memory.release(data);
                    data = filtersOnly;
                    mapsAt = place(mapsStart - start, mapsLength);
                }
            } else if (tag == TAG_WHOLE) {
                readHeadFields(data, pivots, blocks, sizes, false);
            } else {
                throw new IllegalArgumentException("not a leaf node");
            }
            List<KeyFilter> filters = new ArrayList<>(blocks.size());
            for (int i = 0; i < blocks.size(); i++) {
                filters.add(KeyFilter.read(memory, data));
            }
            if (data.isReadable()) {
                throw new IllegalArgumentException("trailing bytes after leaf node");
            }
            LeafNode leaf = new LeafNode(blockNumber, memory, source, pivots, blocks, sizes, filters);
            leaf.image = data;
            leaf.mapsPlace.set(mapsAt);
            return leaf;
        } catch (RuntimeException e) {
            memory.release(data);
            throw e;
        }
    }

    /**
     * Parses the head of a stored leaf from {@code in}, the first bytes of its block (or all of it),
     * which it releases: the leaf, its filters shed, or null when {@code in} is not the head of a
     * leaf of this format or ends inside the head (the caller reads the block whole). Throws
     * {@link IllegalArgumentException} or IndexOutOfBounds on bad bytes.
     */
    static LeafNode readHead(long blockNumber, ByteBuf in, NodeMemory memory, FilterSource source) {
        try {
            byte tag = in.readableBytes() < HEAD_START ? 0 : in.readByte();
            if (tag != TAG && tag != TAG_NO_MAPS) {
                return null;
            }
            int headStart = tag == TAG ? HEAD_START : HEAD_START_NO_MAPS;
            int headLength = in.getInt(in.readerIndex());
            if (headLength < 0 || headLength > in.readableBytes() - (headStart - 1)) {
                return null;
            }
            int filtersLength = in.getInt(in.readerIndex() + 4);
            int mapsLength = tag == TAG ? in.getInt(in.readerIndex() + 8) : 0;
            checkedHeadLength(in, tag == TAG);
            List<byte[]> pivots = new ArrayList<>();
            List<Long> blocks = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            readHeadFields(in.readSlice(headLength), pivots, blocks, sizes, true);
            LeafNode leaf = new LeafNode(blockNumber, memory, source, pivots, blocks, sizes, new ArrayList<>());
            leaf.shed = true;
            if (mapsLength > 0 && filtersLength >= 0) {
                leaf.mapsPlace.set(place(headStart + headLength, mapsLength));
                if (mapsLength <= in.readableBytes()) {
                    leaf.keepMapsRead(in, in.readerIndex(), mapsLength); // read with the head
                }
            }
            return leaf;
        } finally {
            memory.release(in);
        }
    }

    /**
     * Reads the head length, filters length, maps length ({@code withMaps}) and CRC that follow a
     * leaf's tag, checks the CRC over the head that follows them in {@code in}, and returns the
     * head's length; {@code in} is left at the head.
     */
    private static int checkedHeadLength(ByteBuf in, boolean withMaps) {
        int headLength = in.readInt();
        int filtersLength = in.readInt();
        if (withMaps) {
            in.readInt(); // the maps' length: the caller checks it
        }
        int crc = in.readInt();
        if (headLength < 4 || headLength > in.readableBytes() || filtersLength < 0) {
            throw new IllegalArgumentException("impossible leaf head of " + headLength + " bytes (filters "
                    + filtersLength + ") in " + in.readableBytes());
        }
        CRC32C actual = new CRC32C();
        actual.update(in.nioBuffer(in.readerIndex(), headLength));
        if ((int) actual.getValue() != crc) {
            throw new IllegalArgumentException(String.format("leaf head checksum mismatch: stored 0x%08x, computed 0x%08x",
                    crc, (int) actual.getValue()));
        }
        return headLength;
    }

    /**
     * Reads basement count, basements and pivots from {@code in} into the lists; {@code whole} when
     * {@code in} holds exactly them (a head), else it holds the filters too.
     */
    private static void readHeadFields(ByteBuf in, List<byte[]> pivots, List<Long> blocks, List<Integer> sizes,
            boolean whole) {
        int n = in.readInt();
        // Each basement takes 12 bytes here and, in a whole leaf of the old form, 9 or more of filter.
        if (n < 1 || n > in.readableBytes() / (whole ? 12 : 21)) {
            throw new IllegalArgumentException("impossible basement count " + n);
        }
        for (int i = 0; i < n; i++) {
            blocks.add(in.readLong());
            sizes.add(in.readInt());
        }
        for (int i = 0; i < n - 1; i++) {
            byte[] k = new byte[in.readUnsignedShort()];
            in.readBytes(k);
            if (i > 0 && Keys.compare(pivots.get(i - 1), k) >= 0) {
                throw new IllegalArgumentException("leaf pivots out of order");
            }
            pivots.add(k);
        }
        if (whole && in.isReadable()) {
            throw new IllegalArgumentException("trailing bytes after the leaf's head");
        }
    }

    private static long place(int offset, int length) {
        return length <= 0 ? 0 : (long) offset << 32 | length;
    }

    /**
     * The chunk maps in the {@code length} bytes at {@code start} of {@code view} (their CRC32C, then
     * entries), or null when they do not check out.
     */
    private static Maps checkedMaps(ByteBuffer view, int start, int length, int basements) {
        return length >= 4 && crcHolds(view, start, length) ? entriesOf(view, start + 4, start + length, basements)
                : null;
    }

    /** The entries at {@code [start, end)} of {@code view}, checked; null if they are not well-formed. */
    private static Maps entriesOf(ByteBuffer view, int start, int end, int expected) {
        int[] entries = new int[Math.max(1, expected)];
        int n = 0;
        for (int at = start; at < end; ) {
            int entry = ChunkMap.check(view, at, end);
            if (entry < 0) {
                return null;
            }
            if (n == entries.length) {
                entries = java.util.Arrays.copyOf(entries, n * 2);
            }
            entries[n++] = at;
            at += entry;
        }
        return new Maps(view, start, end, java.util.Arrays.copyOf(entries, n));
    }

    /**
     * Holds the maps in the {@code length} bytes at {@code at} of {@code part}, copied, if they
     * check out; otherwise leaves them to be read when asked for ({@link #chunkMaps}). For a leaf
     * of its own, just made.
     */
    private void keepMapsRead(ByteBuf part, int at, int length) {
        if (length >= 4 && crcHolds(NodeMemory.view(part), at, length)) {
            // Entries are checked when a point read first needs them: most heads read are a scan's.
            ByteBuf own = memory.allocate(length - 4);
            own.writeBytes(part, at + 4, length - 4);
            mapsOwned = own;
        }
    }

    private static boolean crcHolds(ByteBuffer view, int start, int length) {
        CRC32C crc = new CRC32C();
        crc.update(view.duplicate().limit(start + length).position(start + 4));
        return (int) crc.getValue() == view.getInt(start);
    }

    /**
     * The chunk maps of this leaf's basements as its block holds them, read from the block when not
     * held; null when it holds none or they do not check out. Valid while the caller holds the
     * leaf pinned and its subtree's latch: the evictor drops them only from a leaf it has claimed
     * (unpinned), and a split or merge only under the latch held exclusively. The maps are hints:
     * an entry may describe a basement version since replaced ({@link ChunkMap}); those held are
     * the leaf's block's when it was read, and the maps its basements' writes left since
     * ({@link RecentChunkMaps}) come first wherever they are used.
     */
    Maps chunkMaps() {
        Maps held = maps;
        if (held != null && mapsWritten == null || held == null && mapsPlace.get() == 0) {
            return held;
        }
        reading.lock();
        try {
            if (mapsWritten != null && mapsRetired == null) {
                takeWrittenMaps();
            }
            long place = mapsPlace.get();
            if (maps != null || place == 0) {
                return maps;
            }
            if (mapsOwned != null) { // read with the head, not yet looked into
                maps = entriesOf(NodeMemory.view(mapsOwned), 0, mapsOwned.writerIndex(), basements.size());
                if (maps == null) {
                    memory.release(mapsOwned);
                    mapsOwned = null;
                    mapsPlace.compareAndSet(place, 0);
                }
                return maps;
            }
            int length = (int) place;
            ByteBuf part = source.readPart(blockNumber(), (int) (place >>> 32), length);
            Maps read = part.readableBytes() == length
                    ? checkedMaps(NodeMemory.view(part), part.readerIndex(), length, basements.size()) : null;
            if (read == null) {
                // Written again since this leaf learned where they were, or damaged: whole reads tell.
                memory.release(part);
                mapsPlace.compareAndSet(place, 0);
                return null;
            }
            mapsOwned = part;
            maps = read;
            source.grew(this);
            return read;
        } finally {
            reading.unlock();
        }
    }

    /**
     * With {@link #reading} held: holds the maps the leaf's last write stored instead of those held,
     * which readers may still be looking into: they wait in {@link #mapsRetired}.
     */
    private void takeWrittenMaps() {
        ByteBuf written = mapsWritten;
        mapsWritten = null;
        Maps fresh = entriesOf(NodeMemory.view(written), 0, written.writerIndex(), basements.size());
        if (fresh == null) {
            memory.release(written); // cannot happen: they were written from checked entries
            return;
        }
        mapsRetired = mapsOwned;
        mapsOwned = written;
        maps = fresh;
    }

    /** Releases maps replaced while readers could look into them; the caller has shut readers out. */
    private void releaseRetiredMaps() {
        memory.release(mapsRetired);
        mapsRetired = null;
    }

    /**
     * Keeps, in a buffer of its own, the entries of {@code sources}' chunk maps (held, or null)
     * that name this leaf's basements, in place of the maps it holds: for a split or merge, whose
     * new leaf's block holds no maps yet. The caller has the leaf to itself.
     */
    private void keepMapsOf(Maps... sources) {
        int length = 0;
        for (Maps m : sources) {
            length += m == null ? 0 : m.end() - m.start();
        }
        ByteBuf kept = memory.allocate(Math.max(1, length));
        for (Maps m : sources) {
            for (int at = m == null ? 0 : m.start(); m != null && at < m.end(); at += m.view().getInt(at)) {
                if (basements.contains(ChunkMap.block(m.view(), at))) {
                    kept.writeBytes(m.view().duplicate().limit(at + m.view().getInt(at)).position(at));
                }
            }
        }
        memory.release(mapsOwned);
        mapsOwned = kept;
        maps = entriesOf(NodeMemory.view(kept), 0, kept.writerIndex(), basements.size());
    }

    /** Whether the filters are in memory: false after {@link #shed}, until something reads them back. */
    boolean filtersHeld() {
        return !shed;
    }

    /**
     * Drops the filters of this clean leaf to free their memory, keeping the basement list; false
     * when there is nothing to drop. Only the evictor calls it, with the leaf to itself (claimed,
     * so unpinned and unlatched).
     */
    @Override
    protected boolean shed() {
        boolean dropped = maps != null || mapsOwned != null || mapsWritten != null;
        dropMaps();
        if (shed || image == null && filters.isEmpty()) {
            return dropped;
        }
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

    /**
     * Before a change: reads shed filters back, and the chunk maps, which the leaf's next write
     * carries forward, so that the write (under the cache's lock, for a checkpoint's image) reads
     * nothing.
     */
    private void holdForChange() {
        holdFilters();
        releaseRetiredMaps(); // a change shuts readers out
        chunkMaps();
    }

    /** Drops every map held; the caller has the leaf to itself. */
    private void dropMaps() {
        maps = null;
        memory.release(mapsOwned);
        mapsOwned = null;
        memory.release(mapsWritten);
        mapsWritten = null;
        releaseRetiredMaps();
    }

    /** The number of filters, one per basement; reads shed filters back. */
    int filterCount() {
        holdFilters();
        return filters.size();
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
        return filters.get(b).mayContain(keyHash);
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
        holdForChange();
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
        holdForChange();
        basementBytes.set(b, basement.bytes());
        filters.set(b, KeyFilter.of(memory, basement, spare)).release();
    }

    /** Records {@code key} as appended to basement {@code b}: its size, and the key in its filter. */
    void appended(int b, Basement basement, byte[] key) {
        holdForChange();
        basementBytes.set(b, basement.bytes());
        if (!filters.get(b).tryAdd(KeyFilter.hash(key))) {
            rebuilt(b, basement);
        }
    }

    /** Inserts {@code right}, split off the top of basement {@code b}, just after it. */
    void insertAfter(int b, Basement right) {
        holdForChange();
        pivots.add(b, right.key(0));
        basements.add(b + 1, right.blockNumber());
        basementBytes.add(b + 1, right.bytes());
        filters.add(b + 1, KeyFilter.of(memory, right));
    }

    /**
     * Removes basement {@code b} and pivot {@code pivot} (one of the two around it), releasing the
     * basement's filter; returns its block, which the caller frees.
     */
    long remove(int b, int pivot) {
        holdForChange();
        pivots.remove(pivot);
        basementBytes.remove(b);
        filters.remove(b).release();
        return basements.remove(b);
    }

    /**
     * Moves basements {@code [start, end)} and the pivots between them into a new leaf made by
     * {@code maker}; the pivot before {@code start} goes too, and is returned.
     */
    byte[] moveTail(int start, LeafMaker maker) {
        holdForChange();
        Maps ours = chunkMaps();
        int end = basements.size();
        byte[] separator = pivots.get(start - 1);
        List<KeyFilter> moved = new ArrayList<>(end - start);
        for (KeyFilter f : filters.subList(start, end)) {
            moved.add(f.ownCopy()); // this leaf's image stays with this leaf
        }
        LeafNode made = maker.make(new ArrayList<>(pivots.subList(start, end - 1)),
                new ArrayList<>(basements.subList(start, end)), new ArrayList<>(basementBytes.subList(start, end)), moved);
        made.keepMapsOf(ours);
        pivots.subList(start - 1, end - 1).clear();
        basements.subList(start, end).clear();
        basementBytes.subList(start, end).clear();
        filters.subList(start, end).clear();
        return separator;
    }

    /** Takes every basement of {@code right}, whose keys sort after {@code separator} and all of this leaf's. */
    void absorb(byte[] separator, LeafNode right) {
        holdForChange();
        right.holdFilters();
        Maps ours = chunkMaps();
        Maps theirs = right.chunkMaps();
        pivots.add(separator);
        pivots.addAll(right.pivots);
        basements.addAll(right.basements);
        basementBytes.addAll(right.basementBytes);
        for (KeyFilter f : right.filters) {
            filters.add(f.ownCopy()); // the right leaf's image goes with it
        }
        right.filters.clear(); // now this leaf's: freeing the right one leaves them
        keepMapsOf(ours, theirs); // before either buffer goes
    }

    /** Makes a leaf from lists it then owns. */
    interface LeafMaker {
        LeafNode make(List<byte[]> pivots, List<Long> basements, List<Integer> sizes, List<KeyFilter> filters);
    }

    @Override
    public BlockCompressor compressor() {
        return STORED_RAW;
    }

    /**
     * The filters' and image's memory, and an estimate of the heap the basement list holds: shed
     * leaves must count for something, or the cache would keep any number of them.
     */
    @Override
    public long memoryBytes() {
        long bytes = 64 + (image == null ? 0 : image.capacity()) + capacity(mapsOwned) + capacity(mapsWritten)
                + capacity(mapsRetired) + basements.size() * 48L;
        for (byte[] p : pivots) {
            bytes += 24 + p.length;
        }
        for (KeyFilter f : filters) {
            bytes += f.memoryBytes();
        }
        return bytes;
    }

    @Override
    public int serializedSizeBound() {
        holdFilters(); // a shed leaf is clean and not written back; a checkpoint may still ask
        int size = HEAD_START + 4 + basements.size() * 12 + 4;
        for (byte[] p : pivots) {
            size += 2 + p.length;
        }
        for (KeyFilter f : filters) {
            size += f.serializedSize();
        }
        for (int i = 0; i < basements.size(); i++) {
            ByteBuffer entry = newestMap(i);
            size += entry == null ? 0 : entry.remaining();
        }
        return size;
    }

    /**
     * The newest chunk map entry known for basement {@code i}, exactly its bytes, or null: the one
     * its last write left ({@link RecentChunkMaps}), else the one among this leaf's maps
     * ({@link #chunkMaps}, read if not held).
     */
    ByteBuffer newestMap(int i) {
        long b = basements.get(i);
        byte[] recent = source.recentMap(b);
        if (recent != null) {
            return ByteBuffer.wrap(recent);
        }
        Maps held = chunkMaps();
        int at = held == null ? -1 : held.find(i, b);
        return at < 0 ? null : held.view().duplicate().limit(at + held.view().getInt(at)).position(at);
    }

    /**
     * Writes the chunk map entry of each basement known, the newest first ({@link RecentChunkMaps},
     * then the maps held), with their CRC in front, in at most {@code room} bytes; nothing when
     * none is known. An entry past the room (a basement written since the bound was taken, whose
     * map grew) is left out.
     */
    private void writeMaps(ByteBuf out, int room) {
        int start = out.writerIndex();
        int limit = start + room;
        out.writeInt(0);
        for (int i = 0; i < basements.size(); i++) {
            ByteBuffer entry = newestMap(i);
            if (entry != null && out.writerIndex() + entry.remaining() <= limit) {
                out.writeBytes(entry);
            }
        }
        if (out.writerIndex() == start + 4) {
            out.writerIndex(start);
            return;
        }
        CRC32C crc = new CRC32C();
        crc.update(out.nioBuffer(start + 4, out.writerIndex() - start - 4));
        out.setInt(start, (int) crc.getValue());
    }

    @Override
    public void serialize(ByteBuf out) {
        holdFilters();
        int start = out.writerIndex();
        out.writeByte(TAG).writeZero(HEAD_START - 1);
        int head = out.writerIndex();
        out.writeInt(basements.size());
        for (int i = 0; i < basements.size(); i++) {
            out.writeLong(basements.get(i)).writeInt(basementBytes.get(i));
        }
        for (byte[] p : pivots) {
            out.writeShort(p.length).writeBytes(p);
        }
        int headEnd = out.writerIndex();
        int filtersBytes = 0;
        for (KeyFilter f : filters) {
            filtersBytes += f.serializedSize();
        }
        writeMaps(out, out.writableBytes() - filtersBytes);
        int mapsEnd = out.writerIndex();
        for (KeyFilter f : filters) {
            f.write(out);
        }
        CRC32C crc = new CRC32C();
        crc.update(out.nioBuffer(head, headEnd - head));
        out.setInt(start + 1, headEnd - head).setInt(start + 5, out.writerIndex() - mapsEnd)
                .setInt(start + 9, mapsEnd - headEnd).setInt(start + 13, (int) crc.getValue());
        mapsPlace.set(place(headEnd - start, mapsEnd - headEnd));
        keepWrittenMaps(out, headEnd, mapsEnd);
    }

    /**
     * Keeps the entries just written at {@code [from + 4, to)} of {@code out} (after their CRC) for
     * readers to take up in place of the maps held, which the entries newer than them replaced.
     */
    private void keepWrittenMaps(ByteBuf out, int from, int to) {
        if (to - from <= 4) {
            return;
        }
        ByteBuf written = memory.allocate(to - from - 4);
        written.writeBytes(out, from + 4, to - from - 4);
        reading.lock();
        try {
            memory.release(mapsWritten); // nobody looks into these: readers take them under this lock
            mapsWritten = written;
        } finally {
            reading.unlock();
        }
    }

    private static long capacity(ByteBuf b) {
        return b == null ? 0 : b.capacity();
    }

    @Override
    protected void releaseMemory() {
        dropMaps();
        shed = false;
        filters.forEach(KeyFilter::release);
        filters.clear();
        memory.release(image);
        image = null;
    }
}
