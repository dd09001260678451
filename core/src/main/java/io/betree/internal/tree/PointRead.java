package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;

/**
 * The point reads of one {@link BeTree}: down from the root, the newest put or delete of the key
 * that the snapshot sees in the buffers on the way, or else the leaf's filter and basement (under
 * a full cache, of an uncached basement only the chunk that may hold the key: {@link ChunkMap}),
 * with the updates met above it applied ({@link PendingUpdates}). Locks as {@link BeTree#get} takes them:
 * the caller holds the tree's structure lock shared; the root latch is held while the root's
 * buffer is read, the subtree's latch from there down.
 *
 * <p>Thread-safe: any number of reads at once.
 */
final class PointRead {
    /** For {@link #lookup}: no subtree latch is held yet. Block numbers are never negative. */
    private static final long NO_SUBTREE = -1;

    private final BeTree tree;
    private final NodeStore store;
    /** What update messages call, where reads meet them. */
    private final UpdateFunctions functions;
    /** How often point reads find nothing in their leaf: whether shed key filters are read back. */
    private final MissShare misses = new MissShare();

    PointRead(BeTree tree, NodeStore store, UpdateFunctions functions) {
        this.tree = tree;
        this.store = store;
        this.functions = functions;
    }

    /** Structure lock held shared. */
    byte[] lookup(byte[] key, long snapshotTs) {
        return lookup(key, snapshotTs, NO_SUBTREE);
    }

    /**
     * Structure lock held shared, and the latch of the root's child {@code heldSubtree} unless it is
     * {@link #NO_SUBTREE}. The root's buffers change under writers: the root's answer is read under
     * the root latch, and the read goes on below with the subtree's latch. Without that latch held
     * first, a flush step may take the root's buffer below between the two (it holds the subtree's
     * latch until the messages are below): a put or delete read twice is harmless, an update applied
     * twice is not, so a read that meets updates in the root reads again with the subtree's latch
     * taken before the root's, as a scan takes them. The root latch, which writers wait for, is held
     * only while the root's buffer is read: the child is pinned (maybe from disk) and the functions
     * run without it.
     */
    private byte[] lookup(byte[] key, long snapshotTs, long heldSubtree) {
        PendingUpdates pending = new PendingUpdates(functions, key);
        InternalNode root;
        int i;
        byte[] found;
        tree.rootLatch.readLock().lock();
        try {
            root = store.pinRoot(tree.rootBlock());
            try {
                i = root.childFor(key);
                found = findInBuffer(root, i, key, snapshotTs, pending);
            } catch (RuntimeException | Error e) {
                store.unpin(root, false);
                throw e;
            }
        } finally {
            tree.rootLatch.readLock().unlock();
        }
        // The root's child list is fixed while the structure lock is held.
        long subtree = root.children.get(i);
        boolean readAgain = found == PendingUpdates.NOT_FOUND && pending.any() && heldSubtree == NO_SUBTREE;
        if (found != PendingUpdates.NOT_FOUND || readAgain) {
            store.unpin(root, false);
            return readAgain ? lookupHolding(key, snapshotTs, subtree) : pending.over(found);
        }
        if (heldSubtree == NO_SUBTREE) {
            tree.subtrees.lockShared(subtree);
        }
        try {
            CacheEntry node;
            try {
                node = pinOnPath(root, i);
            } finally {
                store.unpin(root, false);
            }
            return lookupBelowRoot(node, key, snapshotTs, pending);
        } finally {
            if (heldSubtree == NO_SUBTREE) {
                tree.subtrees.unlockShared(subtree);
            }
        }
    }

    /** {@link #lookup} with the latch of the root's child {@code subtree} taken first. */
    private byte[] lookupHolding(byte[] key, long snapshotTs, long subtree) {
        tree.subtrees.lockShared(subtree);
        try {
            return lookup(key, snapshotTs, subtree);
        } finally {
            tree.subtrees.unlockShared(subtree);
        }
    }

    /**
     * Structure lock and the subtree's latch held shared: the answer at or below the pinned
     * {@code node}, which it unpins.
     */
    private byte[] lookupBelowRoot(CacheEntry node, byte[] key, long snapshotTs, PendingUpdates pending) {
        // The leaves of the last parent read ahead while most reads miss; closed (awaited) before
        // the caller lets go of the subtree's latch, which keeps them from being freed.
        ReadAhead siblings = ReadAhead.NONE;
        try {
            while (node instanceof InternalNode) {
                InternalNode in = (InternalNode) node;
                int i = in.childFor(key);
                byte[] found = findInBuffer(in, i, key, snapshotTs, pending);
                if (found != PendingUpdates.NOT_FOUND) {
                    return pending.over(found);
                }
                if (in.height == 1 && misses.commonForSure()) {
                    siblings = store.readAheadLeaves(in, i);
                }
                CacheEntry next = pinOnPath(in, i);
                store.unpin(node, false);
                node = next;
            }
            LeafNode leaf = (LeafNode) node;
            int at = leaf.basementFor(key);
            // Filters the leaf shed are read back only when misses are common: for a hit they cost
            // a read of about 100 KB on top of the basement's.
            if ((leaf.filtersHeld() || misses.common()) && !leaf.mayContain(at, KeyFilter.hash(key))) {
                misses.record(true);
                return pending.over(null);
            }
            long block = leaf.basements.get(at);
            Basement chunk = store.readsChunkOf(block) ? store.readChunk(leaf, at, key) : null;
            Basement b = chunk != null ? chunk : store.pinBasement(block);
            try {
                byte[] found = b.get(key, snapshotTs, pending.now());
                misses.record(found == null);
                return pending.over(found);
            } finally {
                if (chunk != null) {
                    store.dropChunk(chunk);
                } else {
                    store.unpin(b, false);
                }
            }
        } finally {
            try {
                store.unpin(node, false);
            } finally {
                siblings.close();
            }
        }
    }

    /**
     * Pins child {@code i} of {@code parent}: a leaf not cached is read by its head alone unless
     * misses are common, when its filters are read with it (one read of the block instead of two).
     */
    private CacheEntry pinOnPath(InternalNode parent, int i) {
        return misses.common() ? store.pinChild(parent, i) : store.pinChildForRead(parent, i);
    }

    /**
     * The newest put, delete or range delete of {@code key} a snapshot at {@code snapshotTs} sees
     * in buffer {@code i} of the pinned {@code node}: the value of a put, null for a delete,
     * {@link #PendingUpdates.NOT_FOUND} when there is none. Updates and broadcasts newer than it go to
     * {@code pending}, newest first: they apply to what is found here or below
     * ({@link PendingUpdates#readBuffer}).
     */
    private byte[] findInBuffer(InternalNode node, int i, byte[] key, long snapshotTs, PendingUpdates pending) {
        BufferPartition partition = store.pinBufferIfAny(node, i);
        if (partition == null) {
            return PendingUpdates.NOT_FOUND;
        }
        try {
            return partition.buffer().isEmpty() ? PendingUpdates.NOT_FOUND : pending.readBuffer(partition.buffer(), snapshotTs);
        } finally {
            store.unpinBuffer(node, i, partition, false);
        }
    }
}
