package io.betree.internal.tree;

import io.betree.internal.fault.CorruptionException;
import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A tree's access to its nodes: pinning through the cache (parsing blocks on a miss), creating
 * nodes under fresh block numbers and freeing them.
 */
final class NodeStore {
    /**
     * Bytes of a leaf's block that a read needing no filters fetches: with the block's header, two
     * 4 KiB pages, which hold the head of a leaf of some 200 basements with 10-byte keys (about as
     * fast to read here as one page, and a fifth of the time of a whole leaf's 100 KB).
     */
    static final int LEAF_HEAD_READ = 8192 - BlockFile.BLOCK_HEADER_BYTES;

    private final NodeCache cache;
    private final BlockFile file;
    private volatile BlockCompressor codec;
    /** The chunk maps of the basements written lately, for the leaves' next writes and for reads. */
    private final RecentChunkMaps recentMaps = new RecentChunkMaps();
    /** How basements are written: in chunks of {@link #codec}. */
    private volatile BasementChunks chunks;
    /**
     * Where leaves read shed filters and their chunk maps from ({@link LeafNode#shed}), and find
     * their basements' newest maps.
     */
    private final LeafNode.FilterSource filterSource = new LeafNode.FilterSource() {
        @Override
        public LeafNode readStored(long block) {
            ByteBuf data = cache.fetchAgain(block);
            try {
                return LeafNode.read(block, data, memory(), this); // takes data
            } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                throw new CorruptionException(file.path(), block, "malformed leaf: " + e.getMessage(), e);
            }
        }

        @Override
        public ByteBuf readPart(long block, int from, int length) {
            return cache.fetchRange(block, from, length);
        }

        @Override
        public byte[] recentMap(long basement) {
            return recentMaps.get(basement);
        }

        @Override
        public void grew(LeafNode leaf) {
            cache.remeasure(leaf);
        }
    };

    NodeStore(NodeCache cache, BlockFile file, BlockCompressor codec) {
        this.cache = cache;
        this.file = file;
        useCodec(codec);
    }

    NodeMemory memory() {
        return cache.memory();
    }

    BlockCompressor codec() {
        return codec;
    }

    /** Nodes created from now on are compressed with {@code codec} (leaves are stored as they are). */
    void useCodec(BlockCompressor codec) {
        this.chunks = new BasementChunks(codec, recentMaps);
        this.codec = codec;
    }

    /** Pins an internal node or a leaf. */
    CacheEntry pinNode(long block) {
        CacheEntry e = cache.pin(block, CacheEntry.class, this::load);
        if (e instanceof Basement || e instanceof BufferPartition) {
            cache.release(e, false);
            throw new CorruptionException(file.path(), block, "a tree pointer leads to a "
                    + (e instanceof Basement ? "basement" : "message buffer") + ", not a node", null);
        }
        return e;
    }

    /** Pins a tree's root, which is always an internal node. */
    InternalNode pinRoot(long block) {
        CacheEntry e = pinNode(block);
        if (!(e instanceof InternalNode)) {
            cache.release(e, false);
            throw new CorruptionException(file.path(), block, "a tree's root is not an internal node", null);
        }
        e.keepResident(true);
        return (InternalNode) e;
    }

    /**
     * Starts reading the blocks of {@code blocks} (basements, buffers or leaves,
     * {@link InternalNode#NO_BLOCK} skipped) that are not in the cache, all but the first, which the caller reads sooner itself,
     * on the read-ahead threads, up to 16 per step at a time ({@link ReadAhead}); {@link ReadAhead#NONE}
     * when there is none to read ahead. The caller awaits each before it pins it, and closes the
     * result before any of them may be freed.
     */
    ReadAhead readAhead(long[] blocks) {
        ReadAhead ahead = ReadAhead.NONE;
        boolean first = true;
        for (long block : blocks) {
            if (block != InternalNode.NO_BLOCK && !cache.isCached(block)) {
                if (!first) {
                    if (ahead == ReadAhead.NONE) {
                        ahead = new ReadAhead(b -> cache.prefetch(b, this::load));
                    }
                    ahead.add(block);
                }
                first = false;
            }
        }
        return ahead;
    }

    /**
     * The rows of the one chunk of basement {@code at} of the pinned {@code leaf} that may hold
     * {@code key}, read alone from the basement's block as a basement not in the cache, for the
     * caller to read and {@link #dropChunk drop}; null, having read nothing or nothing usable, when
     * the basement's map is unknown or the chunk does not check out against it (a map of another
     * version, or damage: the caller then pins the basement whole, which tells them apart).
     */
    Basement readChunk(LeafNode leaf, int at, byte[] key) {
        long block = leaf.basements.get(at);
        ByteBuffer map = leaf.newestMap(at);
        if (map == null) {
            return null;
        }
        int entry = map.position();
        int chunk = ChunkMap.chunkFor(map, entry, key);
        int from = ChunkMap.recordStart(map, entry, chunk);
        ByteBuf record = cache.fetchRange(block, from, ChunkMap.recordStart(map, entry, chunk + 1) - from);
        ByteBuf rows;
        try {
            rows = BasementChunks.decodeChunk(record, ChunkMap.stamp(map, entry), memory());
        } finally {
            memory().release(record);
        }
        if (rows == null) {
            return null;
        }
        try {
            return BasementLoader.load(block, rows, memory(), chunks); // takes rows
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return null;
        }
    }

    /** Releases a chunk's rows from {@link #readChunk}. */
    void dropChunk(Basement chunk) {
        chunk.releaseMemory();
    }

    /**
     * Whether a point read of uncached basement {@code block} should read one chunk of it rather
     * than the whole basement: when the cache is full, where the basement would only push out
     * something else. A moment's view.
     */
    boolean readsChunkOf(long block) {
        // The lookup first: most reads find their basement cached, and a budget shared by many
        // caches sums them all to tell whether it is full.
        return !cache.isCached(block) && cache.full();
    }

    /**
     * Starts reading whole, on the read-ahead threads, the leaves under {@code parent} (of height 1)
     * that the cache lacks, when its child {@code i}, which the caller reads itself, is one of them:
     * for point reads while most of them miss, each of which needs its leaf's filters, so that the
     * disk serves the leaves of one parent side by side instead of one miss at a time.
     * {@link ReadAhead#NONE} when child {@code i} is cached. The caller closes the result before it
     * lets go of the latch that keeps the leaves from being freed.
     */
    ReadAhead readAheadLeaves(InternalNode parent, int i) {
        long target = parent.children.get(i);
        if (parent.height != 1 || cache.isCached(target)) {
            return ReadAhead.NONE;
        }
        long[] blocks = new long[parent.children.size()];
        blocks[0] = target; // read by the caller: readAhead leaves the first one out
        int n = 1;
        for (int k = 0; k < blocks.length; k++) {
            if (k != i) {
                blocks[n++] = parent.children.get(k);
            }
        }
        return readAhead(blocks);
    }

    Basement pinBasement(long block) {
        CacheEntry e = cache.pin(block, CacheEntry.class, this::load);
        if (!(e instanceof Basement)) {
            cache.release(e, false);
            throw new CorruptionException(file.path(), block, "a leaf points at a block that is not a basement", null);
        }
        return (Basement) e;
    }

    /**
     * Pins the message buffer of child {@code i} of the pinned {@code node}, to change it: one that
     * has no block ({@link InternalNode#NO_BLOCK}) gets a new, empty one, which the node records (the
     * caller unpins the node modified).
     */
    BufferPartition pinBuffer(InternalNode node, int i) {
        long block = node.partitions.get(i);
        if (block != InternalNode.NO_BLOCK) {
            return asBuffer(cache.pin(block, CacheEntry.class, this::load), node, i);
        }
        BufferPartition fresh = BufferPartition.empty(file.allocateBlockNumber(), codec, memory());
        cache.add(fresh);
        node.partitions.set(i, fresh.blockNumber());
        return fresh;
    }

    /**
     * Pins the message buffer of child {@code i} of the pinned {@code node} to read it: null, having
     * pinned nothing, when it has no block (it is empty).
     */
    BufferPartition pinBufferIfAny(InternalNode node, int i) {
        long block = node.partitions.get(i);
        return block == InternalNode.NO_BLOCK ? null : asBuffer(cache.pin(block, CacheEntry.class, this::load), node, i);
    }

    /**
     * Takes every message of buffer {@code i} of the pinned {@code node} out and frees the buffer's
     * block: below the root an empty buffer has none. Returns the messages, now the caller's.
     */
    MessageBuffer takeAndFreeBuffer(InternalNode node, int i) {
        long block = node.partitions.get(i);
        if (block == InternalNode.NO_BLOCK || node.bufferBytes.get(i) == 0) {
            if (block != InternalNode.NO_BLOCK) {
                freeBlock(block); // an emptied root buffer: nothing in it to read first
                node.partitions.set(i, InternalNode.NO_BLOCK);
            }
            return new MessageBuffer(memory());
        }
        BufferPartition partition = pinBufferIfAny(node, i);
        MessageBuffer taken = partition.replace(null);
        free(partition);
        node.partitions.set(i, InternalNode.NO_BLOCK);
        node.noteBytes(i, 0);
        return taken;
    }

    /** Frees the blocks of {@code node}'s empty buffers: a root's, as it becomes a child. */
    void freeEmptyBuffers(InternalNode node) {
        for (int i = 0; i < node.partitions.size(); i++) {
            if (node.bufferBytes.get(i) == 0 && node.partitions.get(i) != InternalNode.NO_BLOCK) {
                freeBlock(node.partitions.get(i));
                node.partitions.set(i, InternalNode.NO_BLOCK);
            }
        }
    }

    /** The pinned {@code e}, buffer {@code i} of {@code node}, as a partition; unpins it and throws if not one. */
    private BufferPartition asBuffer(CacheEntry e, InternalNode node, int i) {
        if (!(e instanceof BufferPartition)) {
            cache.release(e, false);
            throw new CorruptionException(file.path(), node.blockNumber(), "child " + i + "'s message buffer (block "
                    + e.blockNumber() + ") is a " + e.getClass().getSimpleName(), null);
        }
        return (BufferPartition) e;
    }

    /**
     * Unpins {@code partition}, buffer {@code i} of the pinned {@code node}, recording its size in
     * the node first when {@code modified} (the caller then unpins the node modified too).
     */
    void unpinBuffer(InternalNode node, int i, BufferPartition partition, boolean modified) {
        if (modified) {
            node.noteBytes(i, partition.bytes());
        }
        cache.release(partition, modified);
    }

    /**
     * Sets the {@link CacheEntry#keepResident} hint of those of {@code node}'s buffers that are
     * cached and free to pin: a node that stops being the root lets its buffers go too.
     */
    void keepBuffersResident(InternalNode node, boolean keep) {
        for (long block : node.partitions) {
            CacheEntry e = block == InternalNode.NO_BLOCK ? null : cache.pinIfCached(block);
            if (e != null) {
                e.keepResident(keep);
                cache.release(e, false);
            }
        }
    }

    /**
     * Pins the nodes on the path from {@code root} (pinned by the caller) down its last children,
     * their last buffers unless empty, and the rightmost leaf's last basement, if every one is in
     * the cache, reading none; returns them, for {@link #releasePath}, or null, having kept no pin,
     * if one is not (a leaf that shed its filters counts as not cached). Held through a sequential
     * run, the pins keep the evictor off the path, so that the run reads nothing. The caller holds
     * the structure lock: the path changes only by the run's own splits, which add nodes and drop
     * none.
     */
    List<CacheEntry> pinRightmostPathIfCached(InternalNode root) {
        List<CacheEntry> pinned = new ArrayList<>();
        boolean complete = false;
        try {
            CacheEntry node = root;
            while (node instanceof InternalNode in) {
                int last = in.children.size() - 1;
                if (in.bufferBytes.get(last) > 0) {
                    // A split of the last child splits this buffer too (an empty one it leaves be).
                    CacheEntry buffer = cache.pinIfCached(in.partitions.get(last));
                    if (buffer == null) {
                        return null;
                    }
                    pinned.add(buffer);
                }
                CacheEntry child = cache.pinIfCached(in.children.get(last));
                if (child == null) {
                    return null;
                }
                pinned.add(child);
                int height = child instanceof InternalNode c ? c.height : 0;
                if (height != in.height - 1 || !(child instanceof InternalNode || child instanceof LeafNode)) {
                    return null; // damaged: the root's buffers take the run, and a walk that reads it reports it
                }
                node = child;
            }
            LeafNode leaf = (LeafNode) node;
            if (!leaf.filtersHeld()) {
                return null; // the run would read them back, under the root's latch
            }
            CacheEntry last = cache.pinIfCached(leaf.basements.get(leaf.basements.size() - 1));
            if (last == null) {
                return null;
            }
            pinned.add(last);
            complete = true;
            return pinned;
        } finally {
            if (!complete) {
                releasePath(pinned);
            }
        }
    }

    /** Releases the pins of {@link #pinRightmostPathIfCached}, without waiting for room. */
    void releasePath(List<CacheEntry> path) {
        for (CacheEntry e : path) {
            cache.release(e, false);
        }
    }

    /**
     * Pins child {@code i} of {@code parent}, checking that it sits one level below: a damaged
     * pointer (to itself, an ancestor or another level) must not send a descent in circles.
     */
    CacheEntry pinChild(InternalNode parent, int i) {
        long block = parent.children.get(i);
        CacheEntry child = pinNode(block);
        int height = child instanceof InternalNode ? ((InternalNode) child).height : 0;
        if (height != parent.height - 1) {
            unpin(child, false);
            throw new CorruptionException(file.path(), parent.blockNumber(), "child " + i + " (block " + block
                    + ") has height " + height + ", expected " + (parent.height - 1), null);
        }
        return child;
    }

    /**
     * Pins child {@code i} of {@code parent} for a read that needs no key filters, as
     * {@link #pinChild} does, except that a leaf not in the cache is read by its head alone
     * ({@link LeafNode#readHead}: a few KB of its block instead of about 100), its filters shed.
     */
    CacheEntry pinChildForRead(InternalNode parent, int i) {
        if (parent.height != 1) {
            return pinChild(parent, i);
        }
        long block = parent.children.get(i);
        CacheEntry child = cache.pinReadingPrefix(block, LEAF_HEAD_READ, CacheEntry.class, this::loadLeafHead);
        if (!(child instanceof LeafNode)) {
            unpin(child, false);
            throw new CorruptionException(file.path(), parent.blockNumber(), "child " + i + " (block " + block
                    + ") of a node of height 1 is not a leaf", null);
        }
        return child;
    }

    /**
     * What {@link #pinChildForRead} loads from the first {@link #LEAF_HEAD_READ} bytes of a
     * leaf's block, or from all of it when the block is shorter or stored compressed.
     */
    private CacheEntry loadLeafHead(long block, ByteBuf data) {
        if (data.readableBytes() != LEAF_HEAD_READ) {
            return load(block, data); // the whole block: a part is exactly what was asked for
        }
        LeafNode leaf = null;
        try {
            leaf = LeafNode.readHead(block, data, memory(), filterSource); // takes data
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            // Read whole below: a part is checked only by the head's CRC, while a whole read is
            // retried if the block moved meanwhile and checked by the block's CRC; what is wrong
            // with a block intact as stored, its parse reports.
        }
        // Null also for a head longer than the part read, or a block of an older leaf stored as it is.
        return leaf != null ? leaf : load(block, cache.fetchAgain(block));
    }

    /**
     * Pins node {@code block}, which must have height {@code height} (0 for a leaf): a child of a
     * parent that the caller no longer holds pinned, checked as {@link #pinChild} checks.
     */
    CacheEntry pinNode(long block, int height) {
        CacheEntry node = pinNode(block);
        int actual = node instanceof InternalNode ? ((InternalNode) node).height : 0;
        if (actual != height) {
            unpin(node, false);
            throw new CorruptionException(file.path(), block, "node has height " + actual + ", expected " + height,
                    null);
        }
        return node;
    }

    /**
     * Unpins without waiting for the evictor ({@link NodeCache#release}): the tree never waits for
     * room while it holds a lock or latch others wait on (a writer's sequential run waited for
     * room once per level and row, up to 95 ms a batch, holding the structure lock and the root
     * latch). The tree's entry points call {@link #awaitRoom} once they have let go.
     */
    void unpin(CacheEntry e, boolean modified) {
        cache.release(e, modified);
    }

    /** Whether the cache has been released ({@link NodeCache#released}): the tree's environment is closing. */
    boolean cacheReleased() {
        return cache.released();
    }

    /** Waits, if the cache is over its hard limit, until the evictor has made room. */
    void awaitRoom() {
        cache.awaitRoom();
    }

    /** How far the cache has gone into its headroom above the budget ({@link NodeCache#headroomUsed}). */
    double cacheHeadroomUsed() {
        return cache.headroomUsed();
    }

    /** Waits, if the cache is over its budget, until the evictor has brought it back within. */
    void awaitBudget() {
        cache.awaitBudget();
    }

    private CacheEntry load(long block, ByteBuf data) {
        byte tag = data.readableBytes() > 0 ? data.getByte(data.readerIndex()) : 0;
        try {
            switch (tag) {
                case BasementChunks.TAG:
                case Basement.TAG:
                    return BasementLoader.loadStored(block, data, memory(), chunks); // takes data
                case LeafNode.TAG:
                case LeafNode.TAG_NO_MAPS:
                case LeafNode.TAG_WHOLE:
                    return LeafNode.read(block, data, memory(), filterSource); // takes data
                case InternalNode.TAG:
                    try {
                        return InternalNode.read(block, data, codec);
                    } finally {
                        memory().release(data);
                    }
                case BufferPartition.TAG:
                    try {
                        return BufferPartition.read(block, data, codec, memory());
                    } finally {
                        memory().release(data);
                    }
                default:
                    memory().release(data);
                    throw new IllegalArgumentException("unknown node tag " + tag);
            }
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            throw new CorruptionException(file.path(), block, "malformed node: " + e.getMessage(), e);
        }
    }

    /** A new, empty basement, pinned and dirty. */
    Basement newBasement() {
        Basement b = Basement.empty(file.allocateBlockNumber(), memory(), chunks);
        cache.add(b);
        return b;
    }

    /** Registers a basement made by splitting another one (pinned and dirty). */
    void addNew(CacheEntry e) {
        cache.add(e);
    }

    long allocateBlockNumber() {
        return file.allocateBlockNumber();
    }

    /** A new leaf with one empty basement; both pinned-then-unpinned except the leaf, which stays pinned. */
    LeafNode newLeaf() {
        Basement b = newBasement();
        List<Long> blocks = new ArrayList<>();
        blocks.add(b.blockNumber());
        List<Integer> sizes = new ArrayList<>();
        sizes.add(b.bytes());
        List<KeyFilter> filters = new ArrayList<>();
        filters.add(KeyFilter.of(memory(), b));
        LeafNode leaf = new LeafNode(file.allocateBlockNumber(), memory(), filterSource, new ArrayList<>(),
                blocks, sizes, filters);
        cache.release(b, true);
        cache.add(leaf);
        return leaf;
    }

    /** A new leaf over existing basements, pinned and dirty. */
    LeafNode newLeaf(List<byte[]> pivots, List<Long> basements, List<Integer> sizes, List<KeyFilter> filters) {
        LeafNode leaf = new LeafNode(file.allocateBlockNumber(), memory(), filterSource, pivots, basements,
                sizes, filters);
        cache.add(leaf);
        return leaf;
    }

    /**
     * A new internal node, pinned and dirty, over {@code children} whose buffers are the existing
     * partitions {@code partitions} of {@code bufferBytes} bytes each.
     */
    InternalNode newInternal(int height, List<byte[]> pivots, List<Long> children, List<Long> partitions,
            List<Integer> bufferBytes) {
        InternalNode n = new InternalNode(file.allocateBlockNumber(), codec, height, pivots, children, partitions,
                bufferBytes);
        cache.add(n);
        return n;
    }

    /** A new internal node over {@code children}, whose buffers are empty; pinned and dirty. */
    InternalNode newInternal(int height, List<byte[]> pivots, List<Long> children) {
        List<Long> partitions = new ArrayList<>(children.size());
        List<Integer> bytes = new ArrayList<>(children.size());
        for (int k = 0; k < children.size(); k++) {
            partitions.add(InternalNode.NO_BLOCK);
            bytes.add(0);
        }
        return newInternal(height, pivots, children, partitions, bytes);
    }

    /**
     * A new partition holding {@code buffer} (now its own), added to the cache dirty and unpinned;
     * returns its block number, or {@link InternalNode#NO_BLOCK}, having released it, when the
     * buffer is empty.
     */
    long newPartition(MessageBuffer buffer) {
        if (buffer.isEmpty()) {
            buffer.release();
            return InternalNode.NO_BLOCK;
        }
        BufferPartition p = new BufferPartition(file.allocateBlockNumber(), codec, buffer);
        cache.add(p);
        cache.release(p, true);
        return p.blockNumber();
    }

    /** Drops a pinned internal node and frees its block number and its partitions'. */
    void freeWithBuffers(InternalNode node) {
        for (long partition : node.partitions) {
            if (partition != InternalNode.NO_BLOCK) {
                freeBlock(partition);
            }
        }
        free(node);
    }

    /** Drops a pinned entry and frees its block number. */
    void free(CacheEntry e) {
        cache.discard(e);
        file.freeBlockNumber(e.blockNumber());
    }

    /** Frees an unpinned block given by number, dropping any cached copy without loading it. */
    void freeBlock(long block) {
        cache.discardIfCached(block);
        file.freeBlockNumber(block);
    }
}
