package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.storage.BlockFile;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * One index's B-epsilon tree. Writes become messages in the root's buffers and move down in
 * batches when a node overflows (see docs/design.md); point queries stop at the first level that
 * holds a message for their key; inserts of keys beyond every key the tree has seen go straight to
 * the rightmost leaf.
 *
 * <p>Thread-safe: writers of one tree are serialized by its lock; readers share it. Nodes are
 * pinned while in use and unpinned before a method returns. After a failure in the middle of a
 * write (an I/O error while evicting, say) the in-memory tree may be inconsistent, so the tree
 * tells its {@link FailureListener} and refuses further use until the environment is reopened.
 */
public final class BeTree {
    /**
     * Pending deletes one scan batch may step over before the read pushes them down to the
     * basements: past this, every later read of the range (a queue's head, say) would keep paying
     * for them, while a flush applies them once and lets emptied basements and leaves go.
     */
    static final int TOMBSTONES_WORTH_A_FLUSH = 256;

    private final NodeStore store;
    private volatile TreeConfig config;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Reshaper reshaper;
    private final FailureListener failures;
    private long rootBlock;
    private byte[] maxKey;
    private boolean maxKeyKnown;
    private volatile Throwable failure;
    private volatile boolean closed;

    private BeTree(NodeStore store, TreeConfig config, MvccHorizon horizon, FailureListener failures, long rootBlock) {
        this.store = store;
        this.config = config;
        this.rootBlock = rootBlock;
        this.failures = failures;
        this.reshaper = new Reshaper(store, config, horizon);
    }

    /**
     * A new empty tree: a root with one empty buffer over a leaf with one empty basement.
     *
     * @param horizon tells which row versions readers may still need
     * @param failures told of a write that failed half-way
     */
    public static BeTree create(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures) {
        NodeStore store = new NodeStore(cache, file, config.codec());
        LeafNode leaf = store.newLeaf();
        List<Long> children = new ArrayList<>();
        children.add(leaf.blockNumber());
        List<MessageBuffer> buffers = new ArrayList<>();
        buffers.add(new MessageBuffer(store.memory()));
        // The root is always an internal node, so that even a small index takes writes into a
        // buffer and applies them to its leaf in batches.
        InternalNode root = store.newInternal(1, new ArrayList<>(), children, buffers);
        store.unpin(leaf, true);
        store.unpin(root, true);
        BeTree tree = new BeTree(store, config, horizon, failures, root.blockNumber());
        tree.maxKeyKnown = true;
        return tree;
    }

    /** A stored tree whose root is block {@code rootBlock}; see {@link #create} for the other arguments. */
    public static BeTree open(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures, long rootBlock) {
        return new BeTree(new NodeStore(cache, file, config.codec()), config, horizon, failures, rootBlock);
    }

    /**
     * Runs {@code action} while none of {@code trees} changes: writes in progress finish first and
     * new ones wait until it returns; reads go on. A checkpoint uses it to capture every tree's
     * root and dirty nodes at one moment. Trees are paused in list order, so callers that pause
     * overlapping sets must list them in the same order.
     */
    public static <T> T whileUnchanged(List<BeTree> trees, Supplier<T> action) {
        return whileUnchanged(trees, 0, action);
    }

    private static <T> T whileUnchanged(List<BeTree> trees, int from, Supplier<T> action) {
        if (from == trees.size()) {
            return action.get();
        }
        ReentrantReadWriteLock.WriteLock writes = trees.get(from).lock.writeLock();
        writes.lock();
        try {
            return whileUnchanged(trees, from + 1, action);
        } finally {
            writes.unlock();
        }
    }

    /**
     * Block number of the current root. Stable only while the tree cannot change (inside
     * {@link #whileUnchanged}); otherwise a root that may already have been replaced.
     */
    public long rootBlock() {
        return rootBlock;
    }

    /** The tree's shape parameters. */
    public TreeConfig config() {
        return config;
    }

    /** Compresses nodes created from now on with {@code codec}; existing blocks stay readable. */
    public void useCodec(BlockCompressor codec) {
        TreeConfig c = config;
        if (c.codec().id() != codec.id() || c.codec().level() != codec.level()) {
            config = new TreeConfig(c.nodeSize(), c.basementSize(), c.fanout(), codec);
            store.useCodec(codec);
        }
    }

    NodeStore store() {
        return store;
    }

    /** Refuses every later call; waits for calls in progress. Memory is released by the cache. */
    public void close() {
        lock.writeLock().lock();
        try {
            closed = true;
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("environment is closed");
        }
        Throwable f = failure;
        if (f != null) {
            throw new EnvironmentFailedException("index is unusable after an earlier failure (" + f
                    + "); reopen the environment", f);
        }
    }

    /** The key's value as a snapshot at {@code snapshotTs} sees it, or {@code null} when absent. */
    public byte[] get(byte[] key, long snapshotTs) {
        lock.readLock().lock();
        try {
            checkUsable();
            return lookup(key, snapshotTs);
        } finally {
            lock.readLock().unlock();
        }
    }

    private byte[] lookup(byte[] key, long snapshotTs) {
        CacheEntry node = store.pinNode(rootBlock);
        try {
            while (node instanceof InternalNode) {
                InternalNode in = (InternalNode) node;
                int i = in.childFor(key);
                MessageBuffer buffer = in.buffers.get(i);
                int off = buffer.findNewest(key, snapshotTs);
                if (off >= 0) {
                    return buffer.type(off) == MessageType.PUT ? buffer.value(off) : null;
                }
                CacheEntry next = store.pinChild(in, i);
                store.unpin(node, false);
                node = next;
            }
            LeafNode leaf = (LeafNode) node;
            Basement b = store.pinBasement(leaf.basements.get(leaf.basementFor(key)));
            try {
                return b.get(key, snapshotTs);
            } finally {
                store.unpin(b, false);
            }
        } finally {
            store.unpin(node, false);
        }
    }

    /**
     * Applies a committed write: a {@link MessageType#PUT} of {@code value} or a
     * {@link MessageType#DELETE}, with commit timestamp {@code msn}, which must exceed that of every
     * write applied before. Arguments are copied before this returns.
     */
    public void write(byte type, byte[] key, byte[] value, long msn) {
        lock.writeLock().lock();
        try {
            checkUsable();
            try {
                applyWrite(type, key, value, msn);
            } catch (RuntimeException | Error e) {
                failure = e;
                failures.failed(e);
                throw e;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void applyWrite(byte type, byte[] key, byte[] value, long msn) {
        if (!maxKeyKnown) {
            maxKey = reshaper.maxKey(rootBlock);
            maxKeyKnown = true;
        }
        boolean beyond = maxKey == null || Keys.compare(key, maxKey) > 0;
        if (beyond && type == MessageType.DELETE) {
            return; // No message or entry exists at or beyond this key: nothing to delete.
        }
        InternalNode root = store.pinRoot(rootBlock);
        try {
            if (beyond) {
                reshaper.appendRightmost(root, key, value, msn);
                maxKey = key.clone();
            } else {
                root.buffers.get(root.childFor(key)).append(type, msn, 0L, key, value);
                reshaper.flushWhileOverfull(root);
            }
            root = reshaper.fixRoot(root, beyond, this::setRoot);
        } finally {
            store.unpin(root, true);
        }
    }

    private void setRoot(long block) {
        rootBlock = block;
    }

    /**
     * Reads the entries with keys in {@code [from, upper)} where {@code upper} is the end of the
     * basement that holds {@code from}, merged with the pending messages above it, as a snapshot
     * at {@code snapshotTs} sees them, with {@code overlay} (a transaction's own writes, deletes
     * marked by {@code overlayTombstone}; may be null) applied on top.
     */
    public ScanBatch scanBatch(byte[] from, byte[] toExclusive, long snapshotTs, NavigableMap<byte[], byte[]> overlay,
            byte[] overlayTombstone) {
        ScanBatch batch;
        lock.readLock().lock();
        try {
            checkUsable();
            batch = ScanBatch.read(store, rootBlock, from, toExclusive, snapshotTs, overlay, overlayTombstone);
        } finally {
            lock.readLock().unlock();
        }
        if (batch.tombstones() >= TOMBSTONES_WORTH_A_FLUSH) {
            flushPath(from);
        }
        return batch;
    }

    /**
     * Pushes the pending messages on the path to {@code key} down to its leaf (see
     * {@link Reshaper#flushPath}). A write: it takes the tree's write lock.
     */
    private void flushPath(byte[] key) {
        lock.writeLock().lock();
        try {
            checkUsable();
            InternalNode root = store.pinRoot(rootBlock);
            try {
                reshaper.flushPath(root, key);
                root = reshaper.fixRoot(root, false, this::setRoot);
            } catch (RuntimeException | Error e) {
                failure = e;
                failures.failed(e);
                throw e;
            } finally {
                store.unpin(root, true);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }
}
