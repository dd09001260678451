package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The flush steps of one tree, mostly run on the process's flusher threads ({@link FlushScheduler}): a
 * step moves one of the root's buffers down to its child, and on down as sizes require, while
 * writers go on appending to the root. A tree asks for steps when its root outgrows its size
 * ({@link #flushInBackground}); a read that stepped over many pending deletes runs a step itself
 * ({@link #flushPath}); the {@link Cleaner} has a tree that writes left alone drained
 * ({@link #drainStep}). Steps of one tree in different subtrees run at once, as many as there are
 * flusher threads.
 *
 * <p>Locking (see {@link BeTree}): a step has two phases. The push holds the structure lock
 * shared and the subtree's latch ({@link SubtreeLatches}) exclusively, and the root latch only to
 * take the buffer out of the root; pushing the messages down, which may cascade to the leaves and
 * read evicted nodes, happens without it, so writers wait microseconds, not a step, and readers
 * and flush steps of other subtrees go on. Only when the child has grown past its size or shrunk
 * below a quarter of it does a second phase take the structure lock exclusively to split it or
 * merge it with a neighbour and link the result into the root. Nothing waits for the evictor with
 * the latch held ({@link NodeStore#unpin}); before a step starts it waits until the cache is back
 * within its budget ({@link NodeStore#awaitBudget}), so that its burst of loads fits in the
 * headroom below the hard limit and writers do not wait for the evictor.
 * Thread-safe.
 */
final class RootFlusher {
    /** What a step's push found: nothing to do, or the child it pushed into and whether it needs fixing. */
    private static final long NOTHING = -1;

    private final BeTree tree;
    private final NodeStore store;
    private final Reshaper reshaper;
    /** Flush tasks of this tree queued or running. */
    private final AtomicInteger tasks = new AtomicInteger();
    /** Whether a read's path is being flushed. */
    private final AtomicBoolean pathFlushing = new AtomicBoolean();
    /**
     * Whether a path flush a scan asked for is queued or running on a flusher thread: apart from
     * {@link #pathFlushing}, so that one waiting in the queue does not turn away the synchronous
     * flushes of reads that stepped over many deletes.
     */
    private final AtomicBoolean backgroundPathFlush = new AtomicBoolean();

    RootFlusher(BeTree tree, NodeStore store, Reshaper reshaper) {
        this.tree = tree;
        this.store = store;
        this.reshaper = reshaper;
    }

    /**
     * Has flusher threads bring the root back within its size: queues another task unless as many
     * are queued or running as there are flushers (each takes a subtree no other step is in).
     */
    void flushInBackground() {
        int n;
        do {
            n = tasks.get();
            if (n >= FlushScheduler.THREADS) {
                return;
            }
        } while (!tasks.compareAndSet(n, n + 1));
        FlushScheduler.submit(this::flushWhileOverfull);
    }

    /**
     * Pushes the pending messages on the path to {@code key} down to its leaf on the calling thread,
     * unless another thread is doing so already: a read that stepped over many pending deletes
     * calls it, so that the reads after it no longer step over them. Writers go on meanwhile (the
     * step holds the root latch only briefly); a flusher left to do it would come too late for a
     * scan that walks on through the same deletes, and for the next read of a queue's head.
     */
    void flushPath(byte[] key) {
        if (pathFlushing.compareAndSet(false, true)) {
            try {
                flushStep(key);
            } finally {
                pathFlushing.set(false);
            }
        }
    }

    /**
     * As {@link #flushPath}, on a flusher thread, unless a path flush a scan asked for is queued or
     * running already: a scan that met a range message above its rows asks for it, so that the message meets
     * the rows once in their leaf instead of at every read, without holding up that scan (a scan
     * right after a broadcast of the whole index would otherwise apply it on its own thread).
     */
    void flushPathInBackground(byte[] key) {
        if (!backgroundPathFlush.compareAndSet(false, true)) {
            return;
        }
        try {
            FlushScheduler.submit(() -> {
                try {
                    flushStep(key);
                } catch (RuntimeException | Error e) {
                    // Reported through the failure listener where it failed the tree; otherwise
                    // (no room, a closed tree) the scan that asked goes on reading as before.
                } finally {
                    backgroundPathFlush.set(false);
                }
            });
        } catch (RuntimeException | Error e) {
            backgroundPathFlush.set(false);
            throw e;
        }
    }

    /**
     * One step of draining the tree's buffers ({@link Cleaner}): finds the first buffer, in key
     * order from {@code from}, that holds at least a child's share of a node's size (the batch a
     * flush of a full node moves), and pushes it one level down, with the buffers above it on the
     * same path, as sizes below then require ({@link #flushStep(byte[], int)}). Smaller buffers stay:
     * a few scattered messages pushed into a leaf would rewrite whole basements for them. Returns
     * the key the step flushed toward, from which the next step looks on, or null when no such
     * buffer lies at or after {@code from} (or the tree is unusable).
     */
    byte[] drainStep(byte[] from) {
        Pending found;
        tree.structure.readLock().lock();
        try {
            if (!tree.usable()) {
                return null;
            }
            InternalNode root = pinRootLatched();
            try {
                found = pendingFrom(root, from, 0, drainableBytes());
            } finally {
                store.unpin(root, false);
            }
        } finally {
            tree.structure.readLock().unlock();
        }
        if (found == null) {
            return null;
        }
        flushStep(found.key, found.depth);
        return found.key;
    }

    /** A buffer worth draining: the lower bound of its keys at or after where the walk began, and how far below the root it is. */
    private record Pending(byte[] key, int depth) {
    }

    /** The smallest buffer a drain step moves: a node's size shared among its children. */
    private int drainableBytes() {
        TreeConfig c = tree.config();
        return Math.max(1, c.nodeSize() / c.fanout());
    }

    /**
     * Structure lock held shared, {@code node} pinned at {@code depth} below the root (and, below
     * the root, its subtree's latch held shared): the first buffer at or after {@code from} below
     * {@code node} that holds {@code minBytes} or more, or null. A buffer's byte count is in its
     * node (read under the root latch for the root's), so the walk loads no buffer, only the
     * internal nodes below the ones it passes.
     */
    private Pending pendingFrom(InternalNode node, byte[] from, int depth, int minBytes) {
        int start = node.childFor(from);
        List<Integer> bufferBytes = node.bufferBytes;
        if (depth == 0) { // writers change the root's counts: one copy under its latch
            tree.rootLatch.readLock().lock();
            try {
                bufferBytes = new ArrayList<>(node.bufferBytes);
            } finally {
                tree.rootLatch.readLock().unlock();
            }
        }
        for (int i = start; i < node.children.size(); i++) {
            byte[] bound = i == start ? from : node.pivots.get(i - 1);
            if (bufferBytes.get(i) >= minBytes) {
                return new Pending(bound, depth);
            }
            if (node.height > 1) {
                Pending found = pendingBelow(node, i, bound, depth, minBytes);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /** {@link #pendingFrom} in child {@code i} of {@code node}, an internal node; latches the subtree of a root's child. */
    private Pending pendingBelow(InternalNode node, int i, byte[] from, int depth, int minBytes) {
        long block = node.children.get(i);
        if (depth == 0) {
            tree.subtrees.lockShared(block);
        }
        try {
            InternalNode child = (InternalNode) store.pinChild(node, i);
            try {
                return pendingFrom(child, from, depth + 1, minBytes);
            } finally {
                store.unpin(child, false);
            }
        } finally {
            if (depth == 0) {
                tree.subtrees.unlockShared(block);
            }
        }
    }

    /**
     * A flusher's task: flush steps until the root fits or every buffer left is in a subtree
     * another step has claimed. The last task to end asks again if the root outgrew its size
     * meanwhile (a writer's request may have been turned away just before); while others run,
     * they go on, and a task that found nothing to claim must not spin against them.
     */
    private void flushWhileOverfull() {
        boolean failed = false;
        try {
            while (flushStep(null)) {
                // One buffer per step, so that readers and sequential writers get the lock between.
            }
        } catch (RuntimeException | Error e) {
            failed = true; // already reported through the failure listener; the next call on the tree throws
        } finally {
            if (tasks.decrementAndGet() == 0 && !failed && tree.rootFullness() > 1) {
                flushInBackground();
            }
        }
    }

    /**
     * One step. With a {@code toward} key, moves the root's buffer on the path to that key down
     * and on down the path to the leaf, whatever the root's size; without, moves the heaviest
     * buffer whose subtree no other step is in down if the root is over its size. Returns whether
     * there may be more to do: the root is (still) over its size and this step moved something.
     */
    boolean flushStep(byte[] toward) {
        return flushStep(toward, Integer.MAX_VALUE);
    }

    /**
     * {@link #flushStep(byte[])}, which with a {@code toward} key goes on down the path through
     * {@code levels} buffers below the root's at most.
     */
    private boolean flushStep(byte[] toward, int levels) {
        store.awaitBudget();
        tree.flushGate.awaitOpen();
        long child = NOTHING;
        boolean fix = false;
        tree.structure.readLock().lock();
        try {
            if (!tree.usable()) {
                return false;
            }
            child = toward == null ? claimHeaviest() : childToward(toward);
            if (child == NOTHING) {
                return false;
            }
            tree.subtrees.lockExclusive(child);
            try {
                fix = pushDown(child, toward, levels);
            } catch (RuntimeException | Error e) {
                tree.recordFailure(e);
                throw e;
            } finally {
                tree.subtrees.unlockExclusive(child);
            }
        } finally {
            if (toward == null && child != NOTHING) {
                tree.subtrees.release(child);
            }
            tree.structure.readLock().unlock();
            // Also after a failure: a failed tree's root counts as empty, which lets its stopped
            // writers go on to find the failure.
            BackPressure.PROCESS.rootShrunk(tree.rootFullness());
        }
        if (fix) {
            fixChild(child);
            // A root split leaves a new root with empty buffers: writers held for its size may go.
            BackPressure.PROCESS.rootShrunk(tree.rootFullness());
        }
        return tree.rootFullness() > 1;
    }

    /**
     * Structure lock held shared: claims the subtree of the root's heaviest buffer that no other
     * step has claimed, if the root is over its size, or over {@link BackPressure#SLOW_FROM} times
     * its size while another step runs; returns its child's block or {@link #NOTHING}. A second
     * step moves the second heaviest buffer, and a basement costs about the same to rewrite for
     * few messages as for many: in a 16-writer time series, steps side by side whenever the root
     * was over its size took 15% more CPU per row. They start only when writers are about to be
     * held back.
     */
    private long claimHeaviest() {
        tree.rootLatch.readLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            try {
                double from = tree.subtrees.anyClaimed() ? BackPressure.SLOW_FROM : 1;
                if (root.size() <= from * tree.config().nodeSize()) {
                    return NOTHING;
                }
                while (true) {
                    int best = -1;
                    for (int i = 0; i < root.bufferBytes.size(); i++) {
                        int bytes = root.bufferBytes.get(i);
                        if (bytes > 0 && (best < 0 || bytes > root.bufferBytes.get(best))
                                && !tree.subtrees.isClaimed(root.children.get(i))) {
                            best = i;
                        }
                    }
                    if (best < 0) {
                        return NOTHING;
                    }
                    long child = root.children.get(best);
                    if (tree.subtrees.tryClaim(child)) {
                        return child;
                    }
                }
            } finally {
                store.unpin(root, false);
            }
        } finally {
            tree.rootLatch.readLock().unlock();
        }
    }

    /** Structure lock held shared: the block of the root's child on the path to {@code key}. */
    private long childToward(byte[] key) {
        tree.rootLatch.readLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            try {
                return root.children.get(root.childFor(key));
            } finally {
                store.unpin(root, false);
            }
        } finally {
            tree.rootLatch.readLock().unlock();
        }
    }

    /**
     * Structure lock held shared, the subtree of {@code childBlock} exclusively: takes the root's
     * buffer for that child (unless, without a {@code toward} key, the root fits by now) and
     * pushes it into the child and on down: as sizes require, and with a {@code toward} key along
     * its path through {@code levels} of the child's buffers at most. Returns whether the child
     * must now be split or merged.
     */
    private boolean pushDown(long childBlock, byte[] toward, int levels) {
        MessageBuffer batch = null;
        int childHeight;
        int siblings;
        tree.rootLatch.writeLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            boolean detached = false;
            try {
                if (toward == null && root.size() <= tree.config().nodeSize()) {
                    return false;
                }
                // The child list is fixed while the structure lock is held.
                int i = root.children.indexOf(childBlock);
                batch = reshaper.detach(root, i, true);
                detached = true;
                tree.noteRootSize(root);
                childHeight = root.height - 1;
                siblings = root.children.size();
            } finally {
                store.unpin(root, detached);
            }
        } catch (RuntimeException | Error e) {
            if (batch != null) {
                batch.release(); // detached, but the root's unpin failed
            }
            throw e;
        } finally {
            tree.rootLatch.writeLock().unlock();
        }
        // Writers stopped at the root's limit go on now, not once the push below has ended.
        BackPressure.PROCESS.rootShrunk(tree.rootFullness());
        CacheEntry child;
        try {
            child = store.pinNode(childBlock, childHeight);
        } catch (RuntimeException | Error e) {
            batch.release();
            throw e;
        }
        try {
            reshaper.pushInto(child, batch, toward, levels); // releases the batch
            return reshaper.needsFix(child, siblings);
        } finally {
            store.unpin(child, true);
        }
    }

    /**
     * Splits the root's child {@code childBlock} or merges it with a neighbour, as its size
     * requires, and links the result into the root, which may then split or collapse; with the
     * structure lock exclusive, since the root's child list changes. Does nothing if the child is
     * no longer the root's (another step's fix merged it away or split the root meanwhile).
     */
    private void fixChild(long childBlock) {
        tree.structure.writeLock().lock();
        try {
            if (!tree.usable()) {
                return;
            }
            try {
                fixChildLocked(childBlock);
            } catch (RuntimeException | Error e) {
                tree.recordFailure(e);
                throw e;
            }
        } finally {
            tree.structure.writeLock().unlock();
        }
    }

    /** Structure lock held: pins the root, reading which block it is under the root latch. */
    private InternalNode pinRootLatched() {
        tree.rootLatch.readLock().lock();
        try {
            return store.pinRoot(tree.rootBlock());
        } finally {
            tree.rootLatch.readLock().unlock();
        }
    }

    private void fixChildLocked(long childBlock) {
        InternalNode root = pinRootLatched();
        // The root stays pinned; its child list cannot change, since that takes the structure lock.
        boolean rootReleased = false;
        boolean childConsumed = false;
        CacheEntry child = null;
        List<byte[]> separators = new ArrayList<>();
        List<CacheEntry> pieces = new ArrayList<>();
        try {
            int i = root.children.indexOf(childBlock);
            if (i < 0) {
                return;
            }
            child = store.pinChild(root, i);
            reshaper.splitOff(child, false, separators, pieces);
            tree.rootLatch.writeLock().lock();
            try {
                if (!pieces.isEmpty()) {
                    reshaper.insertChildren(root, i, separators, pieces);
                    store.keepBuffersResident(root, true); // the new buffers too: writers do not read
                } else if (reshaper.shouldMerge(root, child)) {
                    childConsumed = true;
                    reshaper.mergeWithSibling(root, i, child);
                }
                root = reshaper.fixRoot(root, false, tree::setRoot);
                tree.noteRootSize(root);
            } finally {
                rootReleased = true;
                store.unpin(root, true);
                tree.rootLatch.writeLock().unlock();
            }
        } finally {
            for (CacheEntry p : pieces) {
                store.unpin(p, true);
            }
            if (child != null && !childConsumed) {
                store.unpin(child, true);
            }
            if (!rootReleased) {
                store.unpin(root, false);
            }
        }
    }
}
