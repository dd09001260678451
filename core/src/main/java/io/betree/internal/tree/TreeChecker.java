package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import io.betree.internal.fault.CorruptionException;
import io.netty.buffer.ByteBuf;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * Walks a tree from its root and checks the invariants the rest of the package relies on:
 * <ul>
 * <li><b>Shape.</b> The root is an internal node; every internal node has n &ge; 1 children, n-1
 * pivots and n message buffers, each of the size the node records for it, and below the root
 * none empty with a block of its own; every leaf has b &ge; 1 basements, b-1 pivots and b recorded
 * basement sizes, each equal to the basement's actual size (compaction drops a basement by its
 * recorded size without reading it).</li>
 * <li><b>Heights.</b> Each child is exactly one level below its parent; leaves are at height 0.</li>
 * <li><b>Pivots and key bounds.</b> The pivots of every node and leaf ascend strictly and lie
 * strictly inside the node's key range. Following {@link InternalNode#route}, child (or basement)
 * {@code i} owns {@code pivot[i-1] <= k < pivot[i]}: lower bound inclusive, upper exclusive, the
 * bounds narrowing on the way down. Every message key in buffer {@code i}, every key under child
 * {@code i} and every row key of a basement lies in its range.</li>
 * <li><b>Message order.</b> Each buffer's sorted prefix is strictly in (key ascending, msn
 * ascending) order, and no (key, msn) pair occurs twice in a buffer (prefix and unsorted tail
 * together); every message has a known type.</li>
 * <li><b>Basement order.</b> Rows are sorted by key, versions of one key newest first (strictly
 * descending timestamps, a row without timestamp last); the stored form has the header's row count
 * and no trailing bytes.</li>
 * <li><b>Newer above.</b> A message in a node's buffer is newer than any message or row below it
 * for the same key: every msn (or row timestamp) below is smaller than the oldest msn of that key
 * in each buffer the descent passed through.</li>
 * <li><b>Reachability.</b> No block is reachable twice: a node or basement shared by two parents
 * (a DAG) or reached from below (a cycle) is corruption. The reachable blocks are returned, so
 * that a caller holding several trees can check they share none and that the block file has no
 * allocated block that nothing reaches.</li>
 * </ul>
 *
 * <p>A violation is reported as a {@link CorruptionException} naming the data file, the block where
 * it was found and the problem: it is the type the engine already uses for stored data that
 * failed a check, and the API turns it into the public {@code io.betree.CorruptionException},
 * so a test sees the block number and detail without unwrapping. (An {@link IllegalStateException}
 * would blur it with misuse errors such as a closed environment.) Damage found while loading a
 * node, which {@link NodeStore} already reports as corruption, propagates unchanged.
 *
 * <p>Read-only: nodes are pinned through {@link NodeStore} (loading evicted ones) and never
 * changed, and every pin is released before {@link #check} returns or throws. Message buffers are
 * read through their read-only accessors (the sorted prefix and a sorted copy of the unsorted
 * tail), never consolidated; basements are read by serializing them into a scratch buffer of the
 * environment's {@link io.betree.internal.memory.NodeMemory}, released afterwards. The caller holds
 * the tree's read (or write) lock. Cost: every node and basement is visited once; each message and
 * row is looked up in one heap map per level above it. Meant for tests and diagnostics.
 */
final class TreeChecker {
    private static final int HEX_BYTES = 24;

    /** The oldest msn of each key in one buffer that the descent passed through. */
    private record Level(long block, int child, NavigableMap<byte[], Long> oldest) {
    }

    private final NodeStore store;
    private final Path file;
    /** Every block reached so far, with where it was reached from. */
    private final Map<Long, String> reached = new HashMap<>();
    /** The buffers above the node being checked, innermost first. */
    private final Deque<Level> above = new ArrayDeque<>();

    private TreeChecker(NodeStore store, Path file) {
        this.store = store;
        this.file = file;
    }

    /**
     * Checks the tree whose root is {@code rootBlock}.
     *
     * @param file the data file, which violations name
     * @return the numbers of every block reachable from the root (nodes, message buffers and basements)
     * @throws CorruptionException on the first violation found
     */
    static Set<Long> check(NodeStore store, Path file, long rootBlock) {
        TreeChecker checker = new TreeChecker(store, file);
        checker.checkRoot(rootBlock);
        return Collections.unmodifiableSet(checker.reached.keySet());
    }

    private void checkRoot(long rootBlock) {
        reach(rootBlock, "the root pointer");
        CacheEntry root = store.pinNode(rootBlock);
        try {
            if (!(root instanceof InternalNode)) {
                throw fail(rootBlock, "the root is a leaf, not an internal node");
            }
            checkInternal((InternalNode) root, null, null, true);
        } finally {
            store.unpin(root, false);
        }
    }

    /** Checks child {@code i} of {@code parent}, whose key range is {@code [lo, hi)}. */
    private void checkChild(InternalNode parent, int i, byte[] lo, byte[] hi) {
        long block = parent.children.get(i);
        reach(block, "child " + i + " of block " + parent.blockNumber());
        CacheEntry child = store.pinNode(block);
        try {
            int height = child instanceof InternalNode ? ((InternalNode) child).height : 0;
            if (height != parent.height - 1) {
                throw fail(parent.blockNumber(), "child " + i + " (block " + block + ") has height " + height
                        + ", expected " + (parent.height - 1));
            }
            if (child instanceof InternalNode) {
                checkInternal((InternalNode) child, lo, hi, false);
            } else {
                checkLeaf((LeafNode) child, lo, hi);
            }
        } finally {
            store.unpin(child, false);
        }
    }

    private void checkInternal(InternalNode node, byte[] lo, byte[] hi, boolean root) {
        long block = node.blockNumber();
        int n = node.children.size();
        if (node.height < 1) {
            throw fail(block, "an internal node has height " + node.height);
        }
        if (n < 1) {
            throw fail(block, "an internal node has no children");
        }
        if (node.pivots.size() != n - 1) {
            throw fail(block, n + " children but " + node.pivots.size() + " pivots");
        }
        if (node.partitions.size() != n || node.bufferBytes.size() != n) {
            throw fail(block, n + " children but " + node.partitions.size() + " message buffers and "
                    + node.bufferBytes.size() + " recorded buffer sizes");
        }
        checkPivots(block, node.pivots, lo, hi, "pivot");
        for (int i = 0; i < n; i++) {
            byte[] childLo = i == 0 ? lo : node.pivots.get(i - 1);
            byte[] childHi = i == n - 1 ? hi : node.pivots.get(i);
            NavigableMap<byte[], Long> oldest = checkBuffer(node, i, childLo, childHi, root);
            above.push(new Level(block, i, oldest));
            try {
                checkChild(node, i, childLo, childHi);
            } finally {
                above.pop();
            }
        }
    }

    /** Pivots ascend strictly and lie strictly inside {@code (lo, hi)}. */
    private void checkPivots(long block, List<byte[]> pivots, byte[] lo, byte[] hi, String what) {
        for (int j = 0; j < pivots.size(); j++) {
            byte[] p = pivots.get(j);
            if (j > 0 && Keys.compare(pivots.get(j - 1), p) >= 0) {
                throw fail(block, what + "s out of order: " + what + " " + (j - 1) + " " + hex(pivots.get(j - 1))
                        + " is not below " + what + " " + j + " " + hex(p));
            }
            if (lo != null && Keys.compare(p, lo) <= 0) {
                throw fail(block, what + " " + j + " " + hex(p) + " is not above the node's lower bound " + hex(lo));
            }
            if (hi != null && Keys.compare(p, hi) >= 0) {
                throw fail(block, what + " " + j + " " + hex(p) + " is not below the node's upper bound " + hex(hi));
            }
        }
    }

    /**
     * Checks buffer {@code i} of {@code node}, whose keys must lie in {@code [lo, hi)}; returns the
     * oldest msn of each of its keys.
     */
    private NavigableMap<byte[], Long> checkBuffer(InternalNode node, int i, byte[] lo, byte[] hi, boolean root) {
        long block = node.blockNumber();
        long partitionBlock = node.partitions.get(i);
        if (partitionBlock == InternalNode.NO_BLOCK) {
            if (node.bufferBytes.get(i) != 0) {
                throw fail(block, "records buffer " + i + " as " + node.bufferBytes.get(i) + " bytes, but it has no block");
            }
            return new TreeMap<>(Keys::compare);
        }
        if (!root && node.bufferBytes.get(i) == 0) {
            throw fail(block, "keeps block " + partitionBlock + " for its empty buffer " + i
                    + " (below the root an empty buffer has none)");
        }
        reach(partitionBlock, "message buffer " + i + " of block " + block);
        BufferPartition partition = store.pinBufferIfAny(node, i);
        try {
            if (node.bufferBytes.get(i) != partition.bytes()) {
                throw fail(block, "records buffer " + i + " (block " + partitionBlock + ") as "
                        + node.bufferBytes.get(i) + " bytes, but it holds " + partition.bytes());
            }
            return checkMessages(block, partition.buffer(), "buffer " + i + " (block " + partitionBlock + ")", lo,
                    hi);
        } finally {
            store.unpin(partition, false);
        }
    }

    /** Checks the messages of {@code buf}, described by {@code where}, of node {@code block}. */
    private NavigableMap<byte[], Long> checkMessages(long block, MessageBuffer buf, String where, byte[] lo,
            byte[] hi) {
        int[] ordered = buf.orderedOffsets();
        if (ordered.length != buf.count()) {
            throw fail(block, where + " counts " + buf.count() + " messages but indexes " + ordered.length);
        }
        NavigableMap<byte[], Long> oldest = new TreeMap<>(Keys::compare);
        int prev = -1;
        for (int k = 0; k < ordered.length; k++) {
            int off = ordered[k];
            if (prev >= 0) {
                int c = buf.compareKeys(prev, off);
                if (c > 0 || (c == 0 && buf.msn(prev) > buf.msn(off))) {
                    throw fail(block, where + ": sorted messages " + (k - 1) + " and " + k
                            + " are out of (key, msn) order: " + hex(buf.key(prev)) + "@" + buf.msn(prev) + " then "
                            + hex(buf.key(off)) + "@" + buf.msn(off));
                }
            }
            byte[] key = buf.key(off);
            long msn = buf.msn(off);
            if (!MessageType.isKnown(buf.type(off))) {
                throw fail(block, where + ": message " + hex(key) + "@" + msn + " has unknown type " + buf.type(off));
            }
            if (prev >= 0 && compare(buf, prev, off) == 0) {
                throw fail(block, where + " holds two messages for key " + hex(key) + " with msn " + msn);
            }
            checkInRange(block, key, lo, hi, where + ": message " + hex(key) + "@" + msn);
            checkNewerAbove(block, key, msn, where + ": message " + hex(key) + "@" + msn);
            oldest.putIfAbsent(key, msn); // (key, msn) order: the first message of a key is its oldest
            prev = off;
        }
        checkRanges(block, buf, where, lo, hi);
        return oldest;
    }

    private static int compare(MessageBuffer buf, int a, int b) {
        int c = buf.compareKeys(a, b);
        return c != 0 ? c : Long.compare(buf.msn(a), buf.msn(b));
    }

    private void checkLeaf(LeafNode leaf, byte[] lo, byte[] hi) {
        long block = leaf.blockNumber();
        int n = leaf.basements.size();
        if (n < 1) {
            throw fail(block, "a leaf has no basements");
        }
        if (leaf.pivots.size() != n - 1) {
            throw fail(block, n + " basements but " + leaf.pivots.size() + " pivots");
        }
        if (leaf.basementBytes.size() != n) {
            throw fail(block, n + " basements but " + leaf.basementBytes.size() + " recorded sizes");
        }
        if (leaf.filterCount() != n) {
            throw fail(block, n + " basements but " + leaf.filterCount() + " key filters");
        }
        checkPivots(block, leaf.pivots, lo, hi, "basement pivot");
        for (int b = 0; b < n; b++) {
            byte[] basementLo = b == 0 ? lo : leaf.pivots.get(b - 1);
            byte[] basementHi = b == n - 1 ? hi : leaf.pivots.get(b);
            long basementBlock = leaf.basements.get(b);
            reach(basementBlock, "basement " + b + " of leaf " + block);
            Basement basement = store.pinBasement(basementBlock);
            try {
                if (leaf.basementBytes.get(b) != basement.bytes()) {
                    throw fail(block, "records basement " + b + " (block " + basementBlock + ") as "
                            + leaf.basementBytes.get(b) + " bytes, but it holds " + basement.bytes());
                }
                checkBasement(basement, basementLo, basementHi);
                checkFilter(leaf, b, basement);
            } finally {
                store.unpin(basement, false);
            }
        }
    }

    /** Every key of basement {@code b} passes its filter in the leaf: a read that trusts it finds every row. */
    private void checkFilter(LeafNode leaf, int b, Basement basement) {
        for (int p = 0; p < basement.count(); p++) {
            if (!leaf.mayContain(b, basement.keyHash(p))) {
                throw fail(leaf.blockNumber(), "the key filter of basement " + b + " (block " + basement.blockNumber()
                        + ") lacks the key of row " + p);
            }
        }
    }

    /** Checks the basement's rows in their layout (see {@link Basement}), which its chunks hold. */
    private void checkBasement(Basement basement, byte[] lo, byte[] hi) {
        long block = basement.blockNumber();
        ByteBuf image = store.memory().allocate(Math.max(1, basement.bytes()));
        try {
            basement.writeRowsTo(image);
            int end = image.writerIndex();
            if (end < 5 || image.getByte(0) != Basement.TAG) {
                throw fail(block, "a basement's stored form lacks its header");
            }
            int count = image.getInt(1);
            if (count != basement.count()) {
                throw fail(block, "the header counts " + count + " rows but the basement indexes " + basement.count());
            }
            int off = 5;
            byte[] prevKey = null;
            long prevTs = 0;
            for (int r = 0; r < count; r++) {
                if (off + 7 > end) {
                    throw fail(block, "row " + r + " runs past the end");
                }
                int keyLength = image.getUnsignedShort(off);
                int flags = image.getUnsignedByte(off + 2);
                int valueLength = image.getInt(off + 3);
                boolean hasTs = (flags & 2) != 0;
                int keyOff = off + 7 + (hasTs ? 8 : 0);
                if ((flags & ~(Basement.TOMBSTONE | Basement.HAS_TS | Basement.EXPIRES)) != 0 || valueLength < 0 || (long) keyOff + keyLength + valueLength > end) {
                    throw fail(block, "row " + r + " has impossible lengths or flags");
                }
                long ts = hasTs ? image.getLong(off + 7) : 0L;
                byte[] key = Keys.copy(image, keyOff, keyLength);
                String what = "row " + r + " " + hex(key) + (hasTs ? "@" + ts : "");
                if (prevKey != null) {
                    int c = Keys.compare(prevKey, key);
                    if (c > 0) {
                        throw fail(block, what + " sorts before the previous row's key " + hex(prevKey));
                    }
                    if (c == 0 && prevTs <= ts) {
                        throw fail(block, what + ": versions of a key are not newest first (previous version @"
                                + prevTs + ")");
                    }
                }
                checkInRange(block, key, lo, hi, what);
                checkNewerAbove(block, key, ts, what);
                prevKey = key;
                prevTs = ts;
                off = keyOff + keyLength + valueLength;
            }
            if (off != end) {
                throw fail(block, (end - off) + " bytes follow the last row");
            }
        } finally {
            store.memory().release(image);
        }
    }

    /**
     * Range messages lie inside the key range the parents route to the buffer's child (a flush clips
     * them to it), are not empty, and are in msn order.
     */
    private void checkRanges(long block, MessageBuffer buf, String where, byte[] lo, byte[] hi) {
        long previous = Long.MIN_VALUE;
        for (RangeMessage r : buf.ranges()) {
            String what = where + ": " + r;
            checkInRange(block, r.lower(), lo, hi, what + "'s lower bound");
            if (hi != null && (r.upper() == null || Keys.compare(r.upper(), hi) > 0)) {
                throw fail(block, what + " reaches past the upper bound " + hex(hi) + " its parents route to it");
            }
            if (r.upper() != null && Keys.compare(r.lower(), r.upper()) >= 0) {
                throw fail(block, what + " is empty");
            }
            if (r.msn() < previous) {
                throw fail(block, what + " is older than the range message before it");
            }
            previous = r.msn();
        }
    }

    private void checkInRange(long block, byte[] key, byte[] lo, byte[] hi, String what) {
        if (lo != null && Keys.compare(key, lo) < 0) {
            throw fail(block, what + " is below the lower bound " + hex(lo) + " its parents route to it");
        }
        if (hi != null && Keys.compare(key, hi) >= 0) {
            throw fail(block, what + " is not below the upper bound " + hex(hi) + " its parents route to it");
        }
    }

    /** A message or row below must be older than every message for its key in the buffers above. */
    private void checkNewerAbove(long block, byte[] key, long msn, String what) {
        for (Level level : above) {
            Long older = level.oldest().get(key);
            if (older != null && older <= msn) {
                throw fail(block, what + " is not older than the message @" + older + " for the same key in buffer "
                        + level.child() + " of block " + level.block() + " above it");
            }
        }
    }

    private void reach(long block, String from) {
        String earlier = reached.putIfAbsent(block, from);
        if (earlier != null) {
            throw fail(block, "reachable twice: from " + from + " and from " + earlier
                    + " (a shared block or a cycle)");
        }
    }

    private CorruptionException fail(long block, String detail) {
        return new CorruptionException(file, block, "tree check: " + detail, null);
    }

    private static String hex(byte[] key) {
        StringBuilder sb = new StringBuilder(2 + Math.min(key.length, HEX_BYTES) * 2 + 3);
        sb.append("0x");
        for (int i = 0; i < Math.min(key.length, HEX_BYTES); i++) {
            sb.append(Character.forDigit((key[i] >> 4) & 0xf, 16)).append(Character.forDigit(key[i] & 0xf, 16));
        }
        if (key.length > HEX_BYTES) {
            sb.append("...");
        }
        return sb.toString();
    }
}
