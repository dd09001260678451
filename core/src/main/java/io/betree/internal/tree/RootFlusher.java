package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The flush steps of one tree, mostly run on the process's flusher threads ({@link FlushScheduler}): a
 * step moves one of the root's buffers down to its child, and on down as sizes require, while
 * writers go on appending to the root. A tree asks for steps when its root outgrows its size
 * ({@link #flushInBackground}); a read that stepped over many pending deletes runs a step itself
 * ({@link #flushPath}).
 *
 * <p>Locking (see {@link BeTree}): a step holds the tree's structure lock throughout, and its root
 * latch only for what must not race with writers: taking the buffer out, and linking in the pieces
 * of a child that split (or merging it with a neighbour). Pushing the messages down, which may
 * cascade to the leaves and read evicted nodes, and splitting the child happen without the latch,
 * so writers wait microseconds, not a step. Nothing waits for the evictor with the latch held
 * ({@link NodeStore#unpin}); before a step starts it waits until the cache is back within its
 * budget ({@link NodeStore#awaitBudget}), so that its burst of loads fits in the headroom below the
 * hard limit and writers do not wait for the evictor.
 * Thread-safe.
 */
final class RootFlusher {
    private final BeTree tree;
    private final NodeStore store;
    private final Reshaper reshaper;
    /** Whether a flush of the root is queued or running. */
    private final AtomicBoolean flushQueued = new AtomicBoolean();
    /** Whether a read's path is being flushed. */
    private final AtomicBoolean pathFlushing = new AtomicBoolean();

    RootFlusher(BeTree tree, NodeStore store, Reshaper reshaper) {
        this.tree = tree;
        this.store = store;
        this.reshaper = reshaper;
    }

    /** Has a flusher thread bring the root back within its size, unless one is queued already. */
    void flushInBackground() {
        if (flushQueued.compareAndSet(false, true)) {
            FlushScheduler.submit(this::flushWhileOverfull);
        }
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

    /** A flusher's task: flush steps until the root fits; asks again if it outgrew meanwhile. */
    private void flushWhileOverfull() {
        try {
            while (flushStep(null)) {
                // One buffer per step, so that readers and sequential writers get the lock between.
            }
        } catch (RuntimeException | Error e) {
            // Already reported through the failure listener; the next call on the tree throws.
            return;
        } finally {
            flushQueued.set(false);
        }
        if (tree.rootFullness() > 1) {
            flushInBackground();
        }
    }

    /**
     * One step. With a {@code toward} key, moves the root's buffer on the path to that key down
     * and on down the path to the leaf, whatever the root's size; without, moves the root's
     * heaviest buffer down if the root is over its size. Returns whether the root is (still) over
     * its size.
     */
    boolean flushStep(byte[] toward) {
        boolean overSize;
        store.awaitBudget();
        tree.flushGate.awaitOpen();
        tree.structure.writeLock().lock();
        try {
            if (!tree.usable()) {
                return false;
            }
            try {
                overSize = flushRootBuffer(toward);
            } catch (RuntimeException | Error e) {
                tree.recordFailure(e);
                throw e;
            } finally {
                BackPressure.PROCESS.rootShrunk();
            }
        } finally {
            tree.structure.writeLock().unlock();
        }
        return overSize;
    }

    /** Structure lock held: the step of {@link #flushStep}. */
    private boolean flushRootBuffer(byte[] toward) {
        InternalNode root;
        int i;
        MessageBuffer batch;
        tree.rootLatch.writeLock().lock();
        try {
            root = store.pinRoot(tree.rootBlock());
            if (toward == null && tree.noteRootSize(root) <= tree.config().nodeSize()) {
                store.unpin(root, false);
                return false;
            }
            i = toward == null ? root.heaviestChild() : root.childFor(toward);
            batch = reshaper.detach(root, i, true);
            tree.noteRootSize(root);
        } finally {
            tree.rootLatch.writeLock().unlock();
        }
        // The root stays pinned; its child list cannot change, since that takes the structure lock.
        boolean rootReleased = false;
        boolean childConsumed = false;
        CacheEntry child = null;
        List<byte[]> separators = new ArrayList<>();
        List<CacheEntry> pieces = new ArrayList<>();
        try {
            child = store.pinChild(root, i);
            reshaper.pushInto(child, batch, toward);
            reshaper.splitOff(child, false, separators, pieces);
            tree.rootLatch.writeLock().lock();
            try {
                if (!pieces.isEmpty()) {
                    reshaper.insertChildren(root, i, separators, pieces);
                } else if (reshaper.shouldMerge(root, child)) {
                    childConsumed = true;
                    reshaper.mergeWithSibling(root, i, child);
                }
                root = reshaper.fixRoot(root, false, tree::setRoot);
                return tree.noteRootSize(root) > tree.config().nodeSize();
            } finally {
                rootReleased = true;
                store.unpin(root, true);
                tree.rootLatch.writeLock().unlock();
            }
        } finally {
            batch.release();
            for (CacheEntry p : pieces) {
                store.unpin(p, true);
            }
            if (child != null && !childConsumed) {
                store.unpin(child, true);
            }
            if (!rootReleased) {
                store.unpin(root, true);
            }
        }
    }
}
