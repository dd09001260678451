package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.storage.BlockFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * One index's B-epsilon tree. Writes become messages in the root's buffers and move down in
 * batches when a node overflows (see docs/design.md); point queries stop at the first level that
 * holds a message for their key; inserts of keys beyond every key the tree has seen go straight to
 * the rightmost leaf.
 *
 * <p>Writers do work in proportion to their messages: a write appends to the root's buffer and
 * returns; when the root outgrows its size, a flusher thread ({@link FlushScheduler}) moves its
 * heaviest buffers down while writers go on appending. When the flushers fall behind, committed
 * writers are slowed, then stopped, until they catch up ({@link #holdWritersBack}).
 *
 * <p>Thread-safe. Four kinds of lock, always taken in this order: {@code writers} serializes writes
 * (the commit pipeline already applies one commit at a time per tree); {@code structure} is shared
 * by readers and flush steps, and held exclusively by whatever changes the root's child list or
 * nodes on more than one of its subtrees (a split or merge of the root's child, a sequential
 * append, a root replacement, a checkpoint); the {@code subtrees} latches ({@link SubtreeLatches}),
 * one per child of the root, shared by readers below the root and held exclusively by the flush
 * step working in that subtree, so that steps in different subtrees run at once and reads wait only
 * for a step in their own; {@code rootLatch} guards the root node's buffers and {@code rootBlock},
 * so that a writer appending to the root and a flush working below it do not wait for each other
 * ({@link RootFlusher}). A writer never waits for the structure lock (it tries it, and appends to
 * the root when it is taken), so that a checkpoint may hold the lock while it waits for commits in
 * progress ({@link #withFlushesPaused}). Nodes are pinned while in use and unpinned before a method returns. After a
 * failure in the middle of a write or a flush (an I/O error while evicting, say) the in-memory tree
 * may be inconsistent, so the tree tells its {@link FailureListener} and refuses further use until
 * the environment is reopened.
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
    private final ReentrantLock writers = new ReentrantLock();
    /** Package access for {@link RootFlusher} and {@link WritePath} only. */
    final ReentrantReadWriteLock structure = new ReentrantReadWriteLock();
    /** Package access for {@link RootFlusher} only. */
    final SubtreeLatches subtrees = new SubtreeLatches();
    /** Package access for {@link RootFlusher} and {@link WritePath} only. */
    final ReentrantReadWriteLock rootLatch = new ReentrantReadWriteLock();
    /** Closed while a checkpoint pauses flushes; package access for {@link RootFlusher} only. */
    final FlushGate flushGate = new FlushGate();
    private final Reshaper reshaper;
    private final RootFlusher flusher;
    private final FailureListener failures;
    /** Written under the root latch's write side. */
    private volatile long rootBlock;
    /**
     * The root's size as last seen under the root latch's write side (0 before the first write and
     * while nothing is buffered), so that deciding whether to flush takes no lock: a writer asking
     * under the structure lock waited for whole flush steps of the flusher.
     */
    private volatile long rootBytes;
    /** How long commits to this tree usually take, for back-pressure. */
    final UsualCommitTime usualCommitTime = new UsualCommitTime();
    /** How much this tree's writers are slowed to match its flushers, for back-pressure. */
    final WritePace writePace = new WritePace();
    /**
     * Writers in back-pressure whose fullest tree this is, from before their delay is worked out
     * until they leave (stopped ones included): the multiplier of the delay ({@link BackPressure}).
     */
    final AtomicInteger heldWriters = new AtomicInteger();
    /** Where writes go; guarded by {@code writers}. */
    private final WritePath writePath;
    private volatile Throwable failure;
    private volatile boolean closed;
    /** What {@link MessageType#UPDATE} messages call, where scans meet them. */
    private final UpdateFunctions functions;
    /** Point reads. */
    private final PointRead reads;
    /** The {@link Cleaner}'s tick of the last write; stamped by writers. */
    private volatile int lastWrite = Cleaner.epoch();
    /**
     * The {@link #lastWrite} of the quiet spell whose draining ended: no buffer held a flush's
     * worth then. Unlike it at open (what the stored tree buffers is not known) and after every write.
     */
    private volatile int drainedThrough = lastWrite - 1;
    /** Where the drain of the current quiet spell has come to; written by the one drain step running. */
    private volatile DrainCursor drainCursor;

    private BeTree(NodeStore store, TreeConfig config, MvccHorizon horizon, FailureListener failures, long rootBlock,
            UpdateFunctions functions) {
        this.store = store;
        this.config = config;
        this.rootBlock = rootBlock;
        this.failures = failures;
        this.functions = functions;
        this.reads = new PointRead(this, store, functions);
        this.reshaper = new Reshaper(store, config, horizon, functions);
        this.flusher = new RootFlusher(this, store, reshaper);
        this.writePath = new WritePath(this, store, reshaper);
    }

    /**
     * A new empty tree: a root with one empty buffer over a leaf with one empty basement.
     *
     * @param horizon tells which row versions readers may still need
     * @param failures told of a write that failed half-way
     */
    public static BeTree create(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures) {
        return create(cache, file, config, horizon, failures, UpdateFunctions.NONE);
    }

    /** As {@link #create(NodeCache, BlockFile, TreeConfig, MvccHorizon, FailureListener)}, with update functions. */
    public static BeTree create(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures, UpdateFunctions functions) {
        NodeStore store = new NodeStore(cache, file, config.codec());
        LeafNode leaf = store.newLeaf();
        List<Long> children = new ArrayList<>();
        children.add(leaf.blockNumber());
        // The root is always an internal node, so that even a small index takes writes into a
        // buffer and applies them to its leaf in batches.
        InternalNode root = store.newInternal(1, new ArrayList<>(), children);
        store.unpin(leaf, true);
        store.unpin(root, true);
        BeTree tree = new BeTree(store, config, horizon, failures, root.blockNumber(), functions);
        tree.writePath.treeIsEmpty();
        Cleaner.watch(tree);
        return tree;
    }

    /** A stored tree whose root is block {@code rootBlock}; see {@link #create} for the other arguments. */
    public static BeTree open(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures, long rootBlock) {
        return open(cache, file, config, horizon, failures, rootBlock, UpdateFunctions.NONE);
    }

    /** As {@link #open(NodeCache, BlockFile, TreeConfig, MvccHorizon, FailureListener, long)}, with update functions. */
    public static BeTree open(NodeCache cache, BlockFile file, TreeConfig config, MvccHorizon horizon,
            FailureListener failures, long rootBlock, UpdateFunctions functions) {
        BeTree tree = new BeTree(new NodeStore(cache, file, config.codec()), config, horizon, failures, rootBlock,
                functions);
        Cleaner.watch(tree);
        return tree;
    }

    /**
     * Runs {@code action} while no flush step of {@code trees} runs: the steps in progress finish
     * first, and flushers wait until it returns; writes that only append to the root go on, reads
     * wait. A checkpoint takes this before it waits for a quiet point of the commit order and calls
     * {@link #whileUnchanged} inside, so that commits do not wait out a flush step. Trees are paused
     * in list order, so callers that pause overlapping sets must list them in the same order.
     */
    public static <T> T withFlushesPaused(List<BeTree> trees, Supplier<T> action) {
        // Every tree's gate first, so that waiting for one tree's step in progress does not let
        // the others start new ones.
        int closed = 0;
        try {
            for (BeTree tree : trees) {
                tree.flushGate.close();
                closed++;
            }
            return withFlushesPaused(trees, 0, action);
        } finally {
            for (int i = 0; i < closed; i++) {
                trees.get(i).flushGate.open();
            }
        }
    }

    private static <T> T withFlushesPaused(List<BeTree> trees, int from, Supplier<T> action) {
        if (from == trees.size()) {
            return action.get();
        }
        BeTree tree = trees.get(from);
        tree.structure.writeLock().lock();
        try {
            return withFlushesPaused(trees, from + 1, action);
        } finally {
            tree.structure.writeLock().unlock();
        }
    }

    /**
     * Runs {@code action} while none of {@code trees} changes: writes in progress finish first and
     * new ones wait until it returns; reads go on. A checkpoint uses it to capture every tree's
     * root and dirty nodes at one moment. Trees are paused in list order, so callers that pause
     * overlapping sets must list them in the same order; a caller that holds the commit order
     * should have paused the trees' flushes first ({@link #withFlushesPaused}).
     */
    public static <T> T whileUnchanged(List<BeTree> trees, Supplier<T> action) {
        return whileUnchanged(trees, 0, action);
    }

    private static <T> T whileUnchanged(List<BeTree> trees, int from, Supplier<T> action) {
        if (from == trees.size()) {
            return action.get();
        }
        BeTree tree = trees.get(from);
        tree.writers.lock();
        tree.structure.writeLock().lock();
        tree.rootLatch.writeLock().lock();
        try {
            return whileUnchanged(trees, from + 1, action);
        } finally {
            tree.rootLatch.writeLock().unlock();
            tree.structure.writeLock().unlock();
            tree.writers.unlock();
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
        Cleaner.forget(this);
        writers.lock();
        structure.writeLock().lock();
        try {
            closed = true;
        } finally {
            structure.writeLock().unlock();
            writers.unlock();
        }
    }

    /** Whether the tree is neither closed nor failed. */
    boolean usable() {
        return !closed && failure == null;
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
        structure.readLock().lock();
        try {
            checkUsable();
            return reads.lookup(key, snapshotTs);
        } finally {
            structure.readLock().unlock();
            store.awaitRoom();
        }
    }

    /**
     * Applies a committed write: a {@link MessageType#PUT} of {@code value} or a
     * {@link MessageType#DELETE}, with commit timestamp {@code msn}, which must exceed that of every
     * write applied before. Arguments are copied before this returns.
     */
    public void write(byte type, byte[] key, byte[] value, long msn) {
        writeAll(List.of(new SingleWrite(type, key, value)), msn);
    }

    /**
     * Applies a commit's writes to this tree, all with commit timestamp {@code msn}, which must
     * exceed that of every write applied before; keys must be distinct. The locks are taken and
     * the root pinned once per run of writes that go the same way (into the root's buffers, or
     * down the sequential path), not once per write. Arguments are copied before this returns.
     */
    public void writeAll(List<? extends TreeWrite> writes, long msn) {
        long rootSize;
        writers.lock();
        try {
            checkUsable();
            try {
                rootSize = writePath.apply(writes, msn);
            } catch (RuntimeException | Error e) {
                recordFailure(e);
                throw e;
            }
            // Stamped before waiting for room: a writer held at the cache's limit is no quiet spell.
            int tick = Cleaner.epoch();
            if (lastWrite != tick) {
                lastWrite = tick;
            }
        } finally {
            writers.unlock();
            store.awaitRoom();
        }
        if (rootSize > config.nodeSize()) {
            flushInBackground();
        }
    }

    /**
     * The {@link Cleaner}'s question, every tick: whether no write has come for a while and a
     * buffer may hold a flush's worth of messages. Forgets a tree that is closed or failed or
     * whose cache has been released.
     */
    boolean wantsDrain() {
        if (!usable() || store.cacheReleased()) {
            Cleaner.forget(this);
            return false;
        }
        int last = lastWrite;
        return drainedThrough != last && Cleaner.idleSince(last);
    }

    /**
     * One drain step, on a flusher thread, from where the last one of the same quiet spell ended
     * ({@link RootFlusher#drainStep}). A walk that finds nothing from a key starts once more from
     * the first key, as the steps may have pushed messages into buffers behind it; one that finds
     * nothing from the first key ends the quiet spell's draining, as does a failure (a flush's is
     * reported where it failed the tree; a damaged node is left to the reads that meet it).
     */
    void drainStep() {
        int quietSince = lastWrite;
        try {
            DrainCursor at = drainCursor;
            byte[] from = at != null && at.quietSince == quietSince ? at.next : FIRST_KEY;
            byte[] next = flusher.drainStep(from);
            if (lastWrite != quietSince) {
                return;
            }
            if (next == null && from == FIRST_KEY) {
                drainedThrough = quietSince;
            } else {
                drainCursor = new DrainCursor(quietSince, next == null ? FIRST_KEY : next);
            }
        } catch (RuntimeException | Error e) {
            drainedThrough = quietSince;
        }
    }

    /** Whether the draining of the current quiet spell has ended. For tests. */
    boolean drained() {
        return drainedThrough == lastWrite;
    }

    /** The smallest key: where a drain's walk starts. */
    private static final byte[] FIRST_KEY = new byte[0];

    /** Where the next drain step looks from, in the quiet spell that began with write tick {@code quietSince}. */
    private record DrainCursor(int quietSince, byte[] next) {
    }

    /**
     * Back-pressure: delays the calling writer by the pace its trees have learned and, when the
     * flushers or the evictor have fallen behind (a root past twice its size, a cache into its
     * headroom), by more the further behind and the more writers are held at once, and past four
     * times a root's size until the flushers have caught up (see {@link BackPressure}). Writers
     * call it after their commit is visible, holding no lock, so that nobody waits for them
     * meanwhile; it never flushes on the caller's thread. A commit that took longer than usual,
     * {@code commitNanos} from its transaction's start until visible (0: not known), is delayed
     * that much less. Returns the nanoseconds the caller waited.
     */
    public static long holdWritersBack(List<BeTree> trees, long commitNanos) {
        return BackPressure.PROCESS.holdBack(trees, commitNanos);
    }

    /**
     * How far the node cache has gone into its headroom above the budget: 0 within it, 1 at the
     * hard limit.
     */
    double cacheHeadroomUsed() {
        return store.cacheHeadroomUsed();
    }

    /** Has a flusher thread bring the root back within its size, unless one is queued already. */
    void flushInBackground() {
        flusher.flushInBackground();
    }

    /**
     * One flush step on the caller's thread: moves the root's heaviest buffer down if the root is
     * over its size; returns whether it still is. For tests that want no flush left to do.
     */
    boolean flushStep() {
        return flusher.flushStep(null);
    }

    /** Pushes every message on the path to {@code key} down to its leaf, on the caller's thread. For tests. */
    void flushPathTo(byte[] key) {
        flusher.flushStep(key);
    }

    /** The root's size in node sizes, 0 when nothing is buffered in it, the tree is closed or failed. */
    double rootFullness() {
        return closed || failure != null ? 0 : (double) rootBytes / config.nodeSize();
    }

    /** Structure lock held shared: the block of the root's child whose subtree holds {@code key}. */
    private long subtreeFor(byte[] key) {
        rootLatch.readLock().lock();
        try {
            InternalNode root = store.pinRoot(rootBlock);
            try {
                return root.children.get(root.childFor(key));
            } finally {
                store.unpin(root, false);
            }
        } finally {
            rootLatch.readLock().unlock();
        }
    }

    /** A write given one at a time, through {@link #write}. */
    private record SingleWrite(byte type, byte[] key, byte[] value) implements TreeWrite {
    }

    /**
     * Root latch's write side held: records the root's size for {@link #rootFullness} (0 when
     * nothing is buffered, as flushing could not make it smaller); returns it.
     */
    long noteRootSize(InternalNode root) {
        long buffered = root.bufferedBytes();
        long bytes = buffered == 0 ? 0 : root.size(buffered);
        rootBytes = bytes;
        return bytes;
    }

    /** Records a failure that may have left the tree inconsistent. */
    void recordFailure(Throwable e) {
        failure = e;
        failures.failed(e);
    }

    void setRoot(long block) {
        rootBlock = block;
    }

    /** The root's size as last noted ({@link #noteRootSize}). */
    long rootBytes() {
        return rootBytes;
    }

    /**
     * Walks the whole tree and checks its invariants (see {@link TreeChecker}): node shape, heights,
     * pivot order and key bounds, message and row order, the newer-above rule for messages, and that
     * no block is reachable twice. Reads every node and basement (loading evicted ones) and changes
     * nothing; holds the structure lock and the root latch throughout, so flushes, reads and writes
     * wait. For tests and diagnostics.
     *
     * @param dataFile the block file's path, which reports name
     * @return the numbers of every block reachable from the root: internal nodes, leaves, basements
     * @throws io.betree.internal.fault.CorruptionException naming the block and the broken invariant
     * @throws IllegalStateException if the tree is closed
     */
    public Set<Long> checkInvariants(Path dataFile) {
        structure.writeLock().lock();
        rootLatch.readLock().lock();
        try {
            checkUsable();
            return TreeChecker.check(store, dataFile, rootBlock);
        } finally {
            rootLatch.readLock().unlock();
            structure.writeLock().unlock();
        }
    }

    /** As {@link #scanBatch(byte[], byte[], long, ScanOverlay, byte[], int)} with no cap on the entries. */
    public ScanBatch scanBatch(byte[] from, byte[] toExclusive, long snapshotTs, ScanOverlay overlay,
            byte[] overlayTombstone) {
        return scanBatch(from, toExclusive, snapshotTs, overlay, overlayTombstone, Integer.MAX_VALUE);
    }

    /**
     * Reads the entries with keys in {@code [from, upper)} where {@code upper} is the end of the
     * basement that holds {@code from}, merged with the pending messages above it, as a snapshot
     * at {@code snapshotTs} sees them, with {@code overlay} (a transaction's own writes, deletes
     * marked by {@code overlayTombstone}; may be null) applied on top; at most {@code maxEntries}
     * of them (at least 1), the batch's resume key then falling just after the last.
     */
    public ScanBatch scanBatch(byte[] from, byte[] toExclusive, long snapshotTs, ScanOverlay overlay,
            byte[] overlayTombstone, int maxEntries) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        ScanBatch batch;
        structure.readLock().lock();
        try {
            checkUsable();
            // The subtree's latch before the root latch, which the batch holds throughout, as it
            // reads the root's buffer last. The root's child list is fixed meanwhile.
            long subtree = subtreeFor(from);
            subtrees.lockShared(subtree);
            try {
                rootLatch.readLock().lock();
                try {
                    batch = ScanBatch.read(store, rootBlock, from, toExclusive, snapshotTs, overlay, overlayTombstone,
                            maxEntries, functions);
                } finally {
                    rootLatch.readLock().unlock();
                }
            } finally {
                subtrees.unlockShared(subtree);
            }
        } finally {
            structure.readLock().unlock();
            store.awaitRoom();
        }
        if (batch.tombstones() >= TOMBSTONES_WORTH_A_FLUSH) {
            flusher.flushPath(from);
        } else if (batch.rangesAbove()) {
            flusher.flushPathInBackground(from);
        }
        return batch;
    }

}
