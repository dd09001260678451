package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The write-side mechanics of a tree: flushing buffers down, applying messages to basements, and
 * keeping nodes within their size limits by splitting and merging. {@link LeafBasements} does the
 * work inside a leaf, on its basements; this class, the work on nodes. Called by whoever holds the
 * nodes it changes to itself (see {@link BeTree}): a flush step's push, the subtree of the root's
 * child it pushes into; whatever changes the root's child list, the whole tree. Every method that
 * receives a pinned child "consumes" that pin: it unpins or frees it.
 */
final class Reshaper {
    private final NodeStore store;
    private final TreeConfig config;
    private final LeafBasements leaves;

    /**
     * @param horizon the oldest snapshot any reader may still use; versions only older snapshots
     *     could see are dropped when basements are rewritten
     * @param functions what update messages call when they meet a basement's rows
     */
    Reshaper(NodeStore store, TreeConfig config, MvccHorizon horizon, UpdateFunctions functions) {
        this.store = store;
        this.config = config;
        this.leaves = new LeafBasements(store, config, horizon, functions);
    }

    // ---- flushing ----

    /** Flushes the heaviest buffers of {@code node} until it fits its size limit. */
    void flushWhileOverfull(InternalNode node) {
        while (node.size() > config.nodeSize() && node.bufferedBytes() > 0) {
            flushChild(node, node.heaviestChild());
            // A flush below the root holds its subtree's latch but none that writers wait on: a
            // cascade that loads and rewrites node after node waits here for the evictor until the
            // cache is back within its budget, as before the step began, leaving the headroom up
            // to the hard limit to writers. Waiting only at the hard limit, cascades of two
            // flushers kept the cache there, and a writer waited for the evictor round after round
            // beside them (five batches of 64-131 ms in a row in a 30 M-row iiBench).
            store.awaitBudget();
        }
    }

    /** Moves every message of buffer {@code i} into child {@code i}, then repairs the child's shape. */
    private void flushChild(InternalNode parent, int i) {
        flushChild(parent, i, null, 0);
    }

    /**
     * As {@link #flushChild(InternalNode, int)}; with a {@code toward} key, then goes on down the
     * child's path to that key, {@code levels} buffers further at most (before repairing the child,
     * whose shape that may change): a read that stepped over many pending deletes has its path
     * flushed so, applying them once.
     */
    private void flushChild(InternalNode parent, int i, byte[] toward, int levels) {
        MessageBuffer batch = detach(parent, i, false);
        CacheEntry child;
        try {
            child = store.pinChild(parent, i);
        } catch (RuntimeException | Error e) {
            batch.release();
            throw e;
        }
        boolean consumed = false;
        try {
            pushInto(child, batch, toward, levels);
            consumed = true;
            fixChild(parent, i, child, false);
        } finally {
            if (!consumed) {
                store.unpin(child, true);
            }
        }
    }

    /**
     * Takes buffer {@code i} out of {@code parent}, leaving it empty (in a root, with room for what
     * writers will add, {@link MessageBuffer#successor}; below, with no block), and returns it (unsorted:
     * {@link #pushInto} sorts it and releases it; the caller releases it if it cannot hand it
     * over). The first step of a flush, and the only
     * one that changes the parent's buffers: a background flush takes it under the root latch and
     * does the rest without.
     */
    MessageBuffer detach(InternalNode parent, int i, boolean isRoot) {
        if (!isRoot) {
            return store.takeAndFreeBuffer(parent, i);
        }
        // A root's buffers refill from writers' threads: the emptied one keeps its block and room
        // for what they will add.
        BufferPartition partition = store.pinBuffer(parent, i);
        try {
            partition.keepResident(true);
            return partition.replace(partition.buffer().successor());
        } finally {
            store.unpinBuffer(parent, i, partition, true);
        }
    }

    /**
     * Moves the messages of {@code batch} into the pinned {@code child}: applied to its basements
     * (a leaf) or added to its buffers and flushed on down as far as sizes require (an internal
     * node); with a {@code toward} key, then on down the child's path to that key, through
     * {@code levels} of its buffers at most (from the child's own). The child's own
     * shape is repaired by its parent ({@link #fixChild}) afterwards.
     *
     * <p>Takes {@code batch} over and releases it (even on a failure) as soon as its messages are in the child, before
     * the flushes below: a batch held until the cascade under it ended stayed in memory beside
     * each batch detached further down, outside the cache's entries yet inside its budget. In a
     * small-cache delete-FIFO load the two flushers held 19 MiB of such batches (up to 40) of a
     * 64 MiB budget whenever the writer waited at the budget, so the evictor emptied the cache
     * around them.
     */
    void pushInto(CacheEntry child, MessageBuffer batch, byte[] toward, int levels) {
        InternalNode c;
        try {
            batch.consolidate();
            if (child instanceof LeafNode) {
                leaves.applyToLeaf((LeafNode) child, batch);
                return;
            }
            c = (InternalNode) child;
            distribute(batch, c);
        } finally {
            batch.release();
        }
        flushWhileOverfull(c);
        if (toward != null && levels > 0) {
            flushChild(c, c.childFor(toward), toward, levels - 1);
        }
    }

    /**
     * Appends the (sorted) messages of {@code batch} to the buffers of {@code node}'s children:
     * each child's messages are a contiguous range of the batch, found by a binary search on the
     * pivot, and go in as one sorted run ({@link MessageBuffer#appendRun}).
     */
    private void distribute(MessageBuffer batch, InternalNode node) {
        int n = batch.count();
        int[] ends = new int[node.children.size()];
        long[] receiving = new long[ends.length];
        List<List<RangeMessage>> ranges = rangesByChild(batch, node.pivots, ends.length);
        int r = 0;
        for (int child = 0, k = 0; child < ends.length; child++) {
            ends[child] = k >= n ? k
                    : child < node.pivots.size() ? Math.max(k, batch.lowerBound(node.pivots.get(child), false)) : n;
            if (ends[child] > k || ranges != null && !ranges.get(child).isEmpty()) {
                receiving[r++] = node.partitions.get(child);
            }
            k = ends[child];
        }
        try (ReadAhead ahead = store.readAhead(Arrays.copyOf(receiving, r))) {
            for (int child = 0, k = 0; child < ends.length; child++) {
                boolean rangesHere = ranges != null && !ranges.get(child).isEmpty();
                if (ends[child] > k || rangesHere) {
                    ahead.await(node.partitions.get(child));
                    BufferPartition partition = store.pinBuffer(node, child);
                    try {
                        partition.keepResident(false);
                        // The parent's messages are newer than every message here, range ones too.
                        if (rangesHere) {
                            partition.buffer().appendRanges(ranges.get(child));
                        }
                        partition.buffer().appendRun(batch, k, ends[child]);
                    } finally {
                        store.unpinBuffer(node, child, partition, true);
                    }
                }
                k = ends[child];
            }
        }
    }

    /**
     * The range messages of {@code batch}, each clipped to each of {@code children} key ranges that
     * {@code pivots} bound ({@link RangeMessage#clip}), per child in msn order; null when the batch
     * has none.
     */
    private static List<List<RangeMessage>> rangesByChild(MessageBuffer batch, List<byte[]> pivots, int children) {
        if (!batch.hasRanges()) {
            return null;
        }
        List<List<RangeMessage>> byChild = new ArrayList<>(children);
        for (int child = 0; child < children; child++) {
            List<RangeMessage> parts = new ArrayList<>(0);
            for (RangeMessage m : batch.ranges()) {
                RangeMessage part = m.clipToChild(pivots, child);
                if (part != null) {
                    parts.add(part);
                }
            }
            byChild.add(parts);
        }
        return byChild;
    }

    // ---- the sequential path ----

    /**
     * Inserts puts of {@code writes[from, to)}, whose keys rise and lie beyond every key of the
     * tree, into the rightmost basement below {@code node} (sequential path), up to and including
     * the one that fills it; returns where it stopped. Deletes among them have nothing to delete.
     * A part of a run goes down the rightmost path once and each node on it is brought back within
     * its limits once, after the part, so that a node grows by at most a basement before it is
     * fixed. 2,000 commits of 1,000 rising 8-byte keys with 100-byte values into a test tree took
     * 1.2-2.7 s with one descent and one fix per key, 0.43-1.03 s in parts (two rounds of three).
     */
    int appendRightmost(CacheEntry node, List<? extends TreeWrite> writes, int from, int to, long ts) {
        if (node instanceof LeafNode leaf) {
            return leaves.appendToLastBasement(leaf, writes, from, to, ts);
        }
        InternalNode in = (InternalNode) node;
        int last = in.children.size() - 1;
        CacheEntry child = store.pinChild(in, last);
        boolean consumed = false;
        try {
            int end = appendRightmost(child, writes, from, to, ts);
            consumed = true;
            fixChild(in, last, child, true);
            return end;
        } finally {
            if (!consumed) {
                store.unpin(child, true);
            }
        }
    }

    // ---- splits and merges ----

    /**
     * Brings child {@code i} of {@code parent} back within its limits by splitting or merging it;
     * on the {@code sequential} path only by splitting. Consumes the pin on {@code child}.
     */
    void fixChild(InternalNode parent, int i, CacheEntry child, boolean sequential) {
        List<byte[]> separators = new ArrayList<>();
        List<CacheEntry> pieces = new ArrayList<>();
        try {
            splitOff(child, sequential && i == parent.children.size() - 1, separators, pieces);
            if (!pieces.isEmpty()) {
                insertChildren(parent, i, separators, pieces);
            }
        } finally {
            for (CacheEntry p : pieces) {
                store.unpin(p, true);
            }
        }
        // Not on the sequential path: its rightmost node is underfull after every split until
        // appends fill it, and checking whether it could merge pinned its left sibling, which
        // sequential writes never return to and the cache may have dropped, so that writers read
        // it back.
        if (pieces.isEmpty() && !sequential && shouldMerge(parent, child)) {
            mergeWithSibling(parent, i, child);
        } else {
            store.unpin(child, true);
        }
    }

    /**
     * The half of {@link #fixChild} that touches only the child: an oversized {@code child} keeps its
     * first part and gives the rest to new nodes, added pinned to {@code pieces}, with the keys that
     * separate them in {@code separators}; {@link #insertChildren} then links them into the parent.
     * A {@code sequentialRightmost} leaf splits off only its last basement, as sequential inserts
     * never return to the others.
     */
    void splitOff(CacheEntry child, boolean sequentialRightmost, List<byte[]> separators, List<CacheEntry> pieces) {
        if (child instanceof LeafNode) {
            splitLeaf((LeafNode) child, sequentialRightmost, separators, pieces);
        } else {
            splitInternal((InternalNode) child, separators, pieces);
        }
    }

    /**
     * Whether {@code child}, one of {@code siblings} children of its parent, must split
     * ({@link #splitOff} would cut it) or merge with a neighbour ({@link #shouldMerge}).
     */
    boolean needsFix(CacheEntry child, int siblings) {
        if (child instanceof LeafNode) {
            LeafNode leaf = (LeafNode) child;
            if (leaf.totalBytes() > config.nodeSize() && leaf.basements.size() >= 2) {
                return true;
            }
        } else if (((InternalNode) child).children.size() > config.fanout()) {
            return true;
        }
        return underfull(child) && siblings > 1;
    }

    /** Whether child {@code child} of {@code parent}, which did not split, should merge with a neighbour. */
    boolean shouldMerge(InternalNode parent, CacheEntry child) {
        return underfull(child) && parent.children.size() > 1;
    }

    private boolean underfull(CacheEntry node) {
        if (node instanceof LeafNode) {
            return ((LeafNode) node).totalBytes() < config.nodeSize() / 4;
        }
        return ((InternalNode) node).children.size() < Math.max(2, config.fanout() / 4);
    }

    private void splitLeaf(LeafNode leaf, boolean sequential, List<byte[]> separators, List<CacheEntry> pieces) {
        int n = leaf.basements.size();
        long total = leaf.totalBytes();
        if (total <= config.nodeSize() || n < 2) {
            return;
        }
        List<Integer> cuts = new ArrayList<>();
        if (sequential) {
            cuts.add(n - 1);
        } else {
            cuts = cutPoints(leaf.basementBytes, total, config.nodeSize());
        }
        for (int c = cuts.size() - 1; c >= 0; c--) {
            int start = cuts.get(c);
            separators.add(0, leaf.moveTail(start, (pivots, blocks, sizes, filters) -> {
                LeafNode made = store.newLeaf(pivots, blocks, sizes, filters);
                pieces.add(0, made);
                return made;
            }));
        }
    }

    private void splitInternal(InternalNode node, List<byte[]> separators, List<CacheEntry> pieces) {
        int n = node.children.size();
        if (n <= config.fanout()) {
            return;
        }
        List<Integer> ones = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            ones.add(1);
        }
        List<Integer> cuts = cutPoints(ones, n, config.fanout());
        for (int c = cuts.size() - 1; c >= 0; c--) {
            int start = cuts.get(c);
            int end = node.children.size();
            List<byte[]> pivots = new ArrayList<>(node.pivots.subList(start, end - 1));
            List<Long> children = new ArrayList<>(node.children.subList(start, end));
            List<Long> partitions = new ArrayList<>(node.partitions.subList(start, end));
            List<Integer> bytes = new ArrayList<>(node.bufferBytes.subList(start, end));
            separators.add(0, node.pivots.get(start - 1));
            pieces.add(0, store.newInternal(node.height, pivots, children, partitions, bytes));
            node.pivots.subList(start - 1, end - 1).clear();
            node.children.subList(start, end).clear();
            node.partitions.subList(start, end).clear();
            node.bufferBytes.subList(start, end).clear();
        }
    }

    /** Start indices of the pieces after the first, so that each piece weighs about the same. */
    private static List<Integer> cutPoints(List<Integer> weights, long total, long limit) {
        int k = (int) Math.max(2, (total * 4 + limit * 3 - 1) / (limit * 3));
        k = Math.min(k, weights.size());
        List<Integer> cuts = new ArrayList<>();
        long acc = 0;
        for (int idx = 0; idx < weights.size() - 1 && cuts.size() < k - 1; idx++) {
            acc += weights.get(idx);
            if (acc * k >= total * (cuts.size() + 1)) {
                cuts.add(idx + 1);
            }
        }
        if (cuts.isEmpty() && weights.size() > 1) {
            // One piece outweighs the rest (a huge value): cut where the two sides are closest.
            long best = Long.MAX_VALUE;
            int at = 1;
            long left = 0;
            for (int idx = 0; idx < weights.size() - 1; idx++) {
                left += weights.get(idx);
                long gap = Math.abs(total - 2 * left);
                if (gap < best) {
                    best = gap;
                    at = idx + 1;
                }
            }
            cuts.add(at);
        }
        return cuts;
    }

    /** Inserts split-off pieces of child {@code i} after it, splitting buffer {@code i} to match. */
    void insertChildren(InternalNode parent, int i, List<byte[]> separators, List<CacheEntry> pieces) {
        int n = pieces.size() + 1; // child i and the pieces
        long[] blocks = new long[n];
        int[] bytes = new int[n];
        Arrays.fill(blocks, InternalNode.NO_BLOCK);
        blocks[0] = parent.partitions.get(i); // unless it holds messages to split
        List<MessageBuffer> parts = new ArrayList<>(n);
        if (parent.bufferBytes.get(i) > 0) {
            BufferPartition partition = store.pinBuffer(parent, i);
            try {
                MessageBuffer old = partition.buffer();
                old.consolidate();
                List<List<RangeMessage>> ranges = rangesByChild(old, separators, n);
                int from = 0;
                for (int k = 0; k < n; k++) {
                    int end = k < separators.size() ? Math.max(from, old.lowerBound(separators.get(k), false))
                            : old.count();
                    MessageBuffer part = new MessageBuffer(store.memory());
                    if (ranges != null) {
                        part.appendRanges(ranges.get(k));
                    }
                    part.appendRun(old, from, end);
                    parts.add(part);
                    from = end;
                }
                // The block goes with the first part that holds messages, not always the first
                // part: on the sequential path all of them go right, and the run holds the block
                // pinned, so it must not be freed.
                int keeper = 0;
                while (parts.get(keeper).isEmpty()) {
                    keeper++;
                }
                blocks[0] = InternalNode.NO_BLOCK;
                partition.replace(parts.get(keeper)).release();
                parts.set(keeper, null);
                blocks[keeper] = partition.blockNumber();
                bytes[keeper] = partition.bytes();
            } finally {
                store.unpin(partition, true);
            }
        }
        for (int k = 0; k < parts.size(); k++) {
            if (parts.get(k) != null) {
                bytes[k] = parts.get(k).bytes();
                blocks[k] = store.newPartition(parts.get(k)); // none, the buffer released, when empty
            }
        }
        parent.partitions.set(i, blocks[0]);
        parent.noteBytes(i, bytes[0]);
        for (int k = 1; k < n; k++) {
            parent.pivots.add(i + k - 1, separators.get(k - 1));
            parent.children.add(i + k, pieces.get(k - 1).blockNumber());
            parent.partitions.add(i + k, blocks[k]);
            parent.bufferBytes.add(i + k, bytes[k]);
        }
    }

    /** Merges an underfull child (pinned, consumed) with a neighbour when both fit in one node. */
    void mergeWithSibling(InternalNode parent, int i, CacheEntry child) {
        int leftIndex = i + 1 < parent.children.size() ? i : i - 1;
        CacheEntry sibling = store.pinChild(parent, leftIndex == i ? i + 1 : i - 1);
        CacheEntry left = leftIndex == i ? child : sibling;
        CacheEntry right = leftIndex == i ? sibling : child;
        boolean merged = false;
        try {
            if (left instanceof LeafNode) {
                LeafNode l = (LeafNode) left;
                LeafNode r = (LeafNode) right;
                if (l.totalBytes() + r.totalBytes() <= config.nodeSize() * 3L / 4) {
                    l.absorb(parent.pivots.get(leftIndex), r);
                    merged = true;
                    leaves.compactBasements(l);
                }
            } else {
                InternalNode l = (InternalNode) left;
                InternalNode r = (InternalNode) right;
                if (l.children.size() + r.children.size() <= config.fanout() * 3 / 4) {
                    l.pivots.add(parent.pivots.get(leftIndex));
                    l.pivots.addAll(r.pivots);
                    l.children.addAll(r.children);
                    l.partitions.addAll(r.partitions);
                    l.bufferBytes.addAll(r.bufferBytes);
                    r.partitions.clear(); // now the left node's: freeing the right one leaves them
                    r.bufferBytes.clear();
                    merged = true;
                }
            }
            if (merged) {
                absorbBuffer(parent, leftIndex);
                parent.children.remove(leftIndex + 1);
                parent.pivots.remove(leftIndex);
            }
        } finally {
            if (merged) {
                store.free(right);
                store.unpin(left, true);
            } else {
                store.unpin(sibling, false);
                store.unpin(child, true);
            }
        }
    }

    /**
     * Appends the messages of {@code parent}'s buffer {@code left + 1} to its buffer {@code left} and
     * drops the former's partition: the two children are being merged. The right buffer's messages
     * cover keys above the left's, so appending keeps every key's messages in order.
     */
    private void absorbBuffer(InternalNode parent, int left) {
        if (parent.bufferBytes.get(left) == 0) {
            // Nothing to append to: the right buffer's block serves both.
            store.takeAndFreeBuffer(parent, left).release();
            parent.partitions.set(left, parent.partitions.get(left + 1));
            parent.noteBytes(left, parent.bufferBytes.get(left + 1));
        } else if (parent.bufferBytes.get(left + 1) > 0) {
            BufferPartition into = store.pinBuffer(parent, left);
            try {
                MessageBuffer from = store.takeAndFreeBuffer(parent, left + 1);
                from.consolidate();
                into.buffer().appendRun(from, 0, from.count());
                into.buffer().absorbRanges(from);
                from.release();
            } finally {
                store.unpinBuffer(parent, left, into, true);
            }
        } else {
            store.takeAndFreeBuffer(parent, left + 1).release();
        }
        parent.partitions.remove(left + 1);
        parent.bufferBytes.remove(left + 1);
    }

    /**
     * Repairs the root after a write: splits it under a new root, or replaces a root with a single
     * child by that child (the root is always an internal node: a root split makes one, and a
     * collapse stops at height 1). Takes the pinned root and returns the pinned (possibly new) root.
     */
    InternalNode fixRoot(InternalNode root, boolean sequential, LongConsumer setRoot) {
        while (true) {
            if (root.children.size() > config.fanout()) {
                List<Long> children = new ArrayList<>();
                children.add(root.blockNumber());
                InternalNode newRoot = store.newInternal(root.height + 1, new ArrayList<>(), children);
                setRoot.accept(newRoot.blockNumber());
                newRoot.keepResident(true);
                root.keepResident(false);
                store.keepBuffersResident(root, false);
                store.freeEmptyBuffers(root); // below the root an empty buffer has no block
                fixChild(newRoot, 0, root, sequential);
                root = newRoot;
                continue;
            }
            if (root.children.size() == 1 && root.height > 1) {
                if (root.bufferBytes.get(0) > 0) {
                    flushChild(root, 0);
                    continue;
                }
                InternalNode child = (InternalNode) store.pinChild(root, 0);
                setRoot.accept(child.blockNumber());
                child.keepResident(true);
                store.keepBuffersResident(child, true); // they take the writes now
                store.freeWithBuffers(root);
                root = child;
                continue;
            }
            return root;
        }
    }

    // ---- inspection ----

    /** At least the largest key held or pending under block {@code block}, and the last pivot on its rightmost path. */
    byte[] maxKey(long block) {
        CacheEntry node = store.pinNode(block);
        try {
            return maxKeyUnder(node);
        } finally {
            store.unpin(node, false);
        }
    }

    /**
     * At least the largest key under {@code node}, and at least its last pivot: the sequential path
     * appends a key beyond it to the rightmost leaf, so it must not be below the key range of that
     * leaf, which deletes, range deletes and expiry may have left empty.
     */
    private byte[] maxKeyUnder(CacheEntry node) {
        if (node instanceof LeafNode) {
            return leaves.maxKey((LeafNode) node);
        }
        InternalNode in = (InternalNode) node;
        byte[] lastPivot = in.pivots.isEmpty() ? null : in.pivots.get(in.pivots.size() - 1);
        return Keys.max(maxHeldUnder(in), lastPivot);
    }

    /** The largest key held or pending under {@code in}, by {@link #maxKeyUnder} of its children. */
    private byte[] maxHeldUnder(InternalNode in) {
        for (int j = in.children.size() - 1; j >= 0; j--) {
            byte[] fromBuffer = null;
            BufferPartition partition = store.pinBufferIfAny(in, j);
            if (partition != null) {
                try {
                    fromBuffer = partition.buffer().maxKey();
                } finally {
                    store.unpinBuffer(in, j, partition, false);
                }
            }
            CacheEntry child = store.pinChild(in, j);
            byte[] below;
            try {
                below = maxKeyUnder(child);
            } finally {
                store.unpin(child, false);
            }
            byte[] best = Keys.max(below, fromBuffer);
            if (best != null) {
                return best;
            }
        }
        return null;
    }
}
