package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a tree's committed writes go: into the root's buffers, or, for a run of keys beyond every
 * key the tree holds or has pending, down the sequential path straight to the rightmost leaf. It
 * keeps a bound on that largest key, learned once from the stored tree and then raised by every put
 * beyond it. Split from {@link BeTree}, which holds the locks: every method here but
 * {@link #treeIsEmpty} runs with the tree's writers lock held, which guards the bound.
 */
final class WritePath {
    private final BeTree tree;
    private final NodeStore store;
    private final Reshaper reshaper;
    /**
     * At least the largest key the tree holds or has pending (deletes do not lower it), null for
     * none; meaningful once {@link #maxKeyKnown}.
     */
    private byte[] maxKey;
    /** False until the largest key has been looked up in a stored tree: until then every write goes to the root. */
    private boolean maxKeyKnown;

    /** The write path of {@code tree}, whose nodes are in {@code store} and reshaped by {@code reshaper}. */
    WritePath(BeTree tree, NodeStore store, Reshaper reshaper) {
        this.tree = tree;
        this.store = store;
        this.reshaper = reshaper;
    }

    /**
     * The tree was created empty: no key at all, so the first puts may take the sequential path.
     * Called before the tree is published, without the writers lock.
     */
    void treeIsEmpty() {
        maxKey = null;
        maxKeyKnown = true;
    }

    /** Writers lock held: appends the messages, run by run; returns the root's size afterwards. */
    long apply(List<? extends TreeWrite> writes, long msn) {
        if (!maxKeyKnown && tree.structure.writeLock().tryLock()) {
            // Never waits for the structure lock: a checkpoint may hold it while it waits for this
            // commit to be applied. Until the largest key is known, every write goes to the root.
            // Exclusive, since the search may pass through several subtrees.
            try {
                maxKey = reshaper.maxKey(tree.rootBlock());
                maxKeyKnown = true;
            } finally {
                tree.structure.writeLock().unlock();
            }
        }
        writes = appendRanges(writes, msn);
        long rootSize = tree.rootBytes();
        int i = 0;
        int n = writes.size();
        while (i < n) {
            // The sequential path needs the structure lock, which a flusher holds through a whole
            // flush step (tens of milliseconds): a writer that would wait appends to the root instead.
            int next = -1;
            if (beyondMaxKey(writes.get(i)) && writes.get(i).type() != MessageType.UPDATE
                    && tree.structure.writeLock().tryLock()) {
                try {
                    next = appendSequentialRun(writes, i, msn);
                } finally {
                    tree.structure.writeLock().unlock();
                }
            }
            // A run the sequential path turned away goes into the root whole, not a write at a time.
            i = next >= 0 ? next : appendToRootRun(writes, i, msn, beyondMaxKey(writes.get(i)));
            rootSize = tree.rootBytes();
        }
        return rootSize;
    }

    /**
     * Writers lock held: appends the range messages among {@code writes} to the root's buffers, each
     * child's buffer the part in its key range, and returns the keyed writes (the list itself when
     * it has no range message). A later put in a pending range must not go down the sequential path
     * below the message, which would then delete or change the newer row: that path checks the
     * buffers on its way ({@link #rangePendingAbove}).
     */
    private List<? extends TreeWrite> appendRanges(List<? extends TreeWrite> writes, long msn) {
        List<TreeWrite> keyed = null;
        for (int k = 0; k < writes.size(); k++) {
            TreeWrite w = writes.get(k);
            if (!MessageType.isRange(w.type())) {
                if (keyed != null) {
                    keyed.add(w);
                }
                continue;
            }
            if (keyed == null) {
                keyed = new ArrayList<>(writes.subList(0, k));
            }
            RangeMessage r = RangeMessage.of(w.type(), msn, 0L, w.key().clone(), w.value());
            appendRangeToRoot(r);
        }
        return keyed == null ? writes : keyed;
    }

    /** Writers lock held: appends {@code r} to the buffers of the root's children whose key ranges it meets. */
    private void appendRangeToRoot(RangeMessage r) {
        tree.rootLatch.writeLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            try {
                for (int child = 0; child < root.children.size(); child++) {
                    RangeMessage part = r.clipToChild(root.pivots, child);
                    if (part == null) {
                        continue;
                    }
                    BufferPartition partition = store.pinBuffer(root, child);
                    try {
                        partition.keepResident(true);
                        partition.buffer().appendRange(part);
                    } finally {
                        store.unpinBuffer(root, child, partition, true);
                    }
                }
            } finally {
                tree.noteRootSize(root);
                store.unpin(root, true);
            }
        } finally {
            tree.rootLatch.writeLock().unlock();
        }
    }

    /**
     * Whether {@code w}'s key is known to lie beyond every key the tree holds or has pending.
     * Writers lock held.
     */
    private boolean beyondMaxKey(TreeWrite w) {
        return maxKeyKnown && (maxKey == null || Keys.compare(w.key(), maxKey) > 0);
    }

    /**
     * Writers and structure locks held: the run of writes from {@code from} (not an update) whose
     * keys lie beyond every key so far. Puts go down the sequential path to the rightmost leaf, a
     * part that fills a basement at a time ({@link Reshaper#appendRightmost}), which changes nodes
     * below the root; deletes there have nothing to delete. An update ends the run: it goes to the
     * root's buffer, to meet its key's value (none, here) in a basement. Returns where the run ended, or -1, having written
     * nothing, when a node or basement on that path is not in the cache: a writer does not read
     * nodes (under a 64 MiB cache, reading them made commits of a sequential load wait 8-60 ms), so
     * the run goes to the root's buffer, and the flushers bring the path back.
     */
    private int appendSequentialRun(List<? extends TreeWrite> writes, int from, long msn) {
        tree.rootLatch.writeLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            List<CacheEntry> path = null;
            int i = from;
            try {
                path = store.pinRightmostPathIfCached(root);
                if (path == null || rangePendingAbove(path, writes.get(from).key())) {
                    return -1;
                }
                int runEnd = risingRunEnd(writes, from);
                while (i < runEnd) {
                    if (writes.get(i).type() == MessageType.DELETE) {
                        i++; // nothing at or beyond this key to delete, and nothing to fix
                        continue;
                    }
                    i = reshaper.appendRightmost(root, writes, i, runEnd, msn);
                    root = reshaper.fixRoot(root, true, tree::setRoot);
                }
                for (int k = runEnd - 1; k >= from; k--) {
                    if (writes.get(k).type() != MessageType.DELETE) {
                        maxKey = writes.get(k).key().clone();
                        break;
                    }
                }
                tree.noteRootSize(root);
                return runEnd;
            } finally {
                if (path != null) {
                    store.releasePath(path);
                }
                store.unpin(root, path != null);
            }
        } finally {
            tree.rootLatch.writeLock().unlock();
        }
    }

    /**
     * Whether a buffer on the rightmost {@code path} holds a range message reaching {@code key} or
     * beyond, whose rows a put appended below it would wrongly meet. Such runs go to the root, after
     * the message, until a flush takes it down.
     */
    private static boolean rangePendingAbove(List<CacheEntry> path, byte[] key) {
        for (CacheEntry e : path) {
            if (e instanceof BufferPartition p && p.buffer().hasRangeIn(key, null, Long.MAX_VALUE)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Where the run of writes from {@code from} (a key beyond every key) ends whose keys each lie
     * beyond every key and every put before them, and that are not updates. Writers lock held.
     */
    private int risingRunEnd(List<? extends TreeWrite> writes, int from) {
        byte[] max = maxKey;
        int end = from;
        for (; end < writes.size(); end++) {
            TreeWrite w = writes.get(end);
            if (max != null && Keys.compare(w.key(), max) <= 0 || w.type() == MessageType.UPDATE) {
                break;
            }
            if (w.type() != MessageType.DELETE) {
                max = w.key();
            }
        }
        return end;
    }

    /**
     * Writers lock held: appends writes from {@code from} to the root's buffers under the root latch
     * alone: the run whose keys are not beyond every key, or at least the first write (a key beyond
     * every key is welcome in the root too; a put there raises the largest key, which also counts
     * pending puts); with {@code toTheEnd}, every write from {@code from} on. Returns where the run
     * ended.
     */
    private int appendToRootRun(List<? extends TreeWrite> writes, int from, long msn, boolean toTheEnd) {
        tree.rootLatch.writeLock().lock();
        try {
            InternalNode root = store.pinRoot(tree.rootBlock());
            BufferPartition[] pinned = new BufferPartition[root.children.size()];
            int i = from;
            try {
                for (; i < writes.size() && (i == from || toTheEnd || !beyondMaxKey(writes.get(i))); i++) {
                    TreeWrite w = writes.get(i);
                    if (beyondMaxKey(w)) {
                        if (w.type() == MessageType.DELETE) {
                            continue; // nothing at or beyond this key to delete
                        }
                        maxKey = w.key().clone();
                    }
                    int child = root.childFor(w.key());
                    if (pinned[child] == null) {
                        pinned[child] = store.pinBuffer(root, child);
                        pinned[child].keepResident(true); // writers do not read: see pinRoot
                    }
                    pinned[child].buffer().append(w.type(), msn, 0L, w.key(), w.value());
                }
            } finally {
                for (int c = 0; c < pinned.length; c++) {
                    if (pinned[c] != null) {
                        store.unpinBuffer(root, c, pinned[c], true);
                    }
                }
                tree.noteRootSize(root);
                store.unpin(root, true);
            }
            return i;
        } finally {
            tree.rootLatch.writeLock().unlock();
        }
    }
}
