package io.betree.internal.tree;

import java.util.Arrays;
import java.util.List;

/**
 * The write side's work inside a leaf, on its basements: a flushed batch of sorted messages applied
 * basement by basement, each basement split in halves once it outgrows its size, then empty
 * basements dropped and small neighbours merged; a sequential run's puts appended to the last
 * basement, which is kept full and followed by a new one; and the largest key the basements hold.
 * {@link Reshaper} does the work on nodes (flushes, node splits and merges) and calls these with
 * the leaf pinned.
 *
 * <p>Not thread-safe: called only through {@link Reshaper}, by whoever holds the leaf to itself
 * (see {@link BeTree}).
 */
final class LeafBasements {
    private static final int EMPTY_BASEMENT = 5;

    private final NodeStore store;
    private final TreeConfig config;
    private final MvccHorizon horizon;
    /** What update messages call when they meet a basement's rows. */
    private final UpdateFunctions functions;

    /**
     * @param horizon the oldest snapshot any reader may still use; versions only older snapshots
     *     could see are dropped when basements are rewritten
     * @param functions what update messages call when they meet a basement's rows
     */
    LeafBasements(NodeStore store, TreeConfig config, MvccHorizon horizon, UpdateFunctions functions) {
        this.store = store;
        this.config = config;
        this.horizon = horizon;
        this.functions = functions;
    }

    /**
     * Applies the (consolidated) messages of {@code msgs} to the leaf's basements, range messages
     * included: in msn order, the keyed messages older than a range message before it and those of
     * its msn or newer after it ({@link RangeMessage}). The keyed messages are sorted into those
     * phases in one pass; a phase that holds them all applies {@code msgs} itself.
     */
    void applyToLeaf(LeafNode leaf, MessageBuffer msgs) {
        if (!msgs.hasRanges()) {
            applyToLeaf(leaf, msgs, 0, msgs.count());
            return;
        }
        List<RangeMessage> ranges = msgs.ranges();
        int[] phaseOf = new int[msgs.count()];
        int[] sizes = new int[ranges.size() + 1];
        for (int m = 0; m < msgs.count(); m++) {
            phaseOf[m] = phaseOf(ranges, msgs.msn(msgs.sortedOffset(m)));
            sizes[phaseOf[m]]++;
        }
        int whole = -1; // the phase that holds every keyed message, applied from msgs itself
        for (int p = 0; p < sizes.length && msgs.count() > 0; p++) {
            if (sizes[p] == msgs.count()) {
                whole = p;
            }
        }
        MessageBuffer[] phases = new MessageBuffer[sizes.length];
        try {
            for (int m = 0; m < msgs.count() && whole < 0; m++) {
                int p = phaseOf[m];
                if (phases[p] == null) {
                    phases[p] = new MessageBuffer(store.memory());
                }
                int off = msgs.sortedOffset(m);
                phases[p].append(msgs.type(off), msgs.msn(off), msgs.txnId(off), msgs.key(off), msgs.value(off));
            }
            for (int p = 0; p < sizes.length; p++) {
                if (p == whole) {
                    applyToLeaf(leaf, msgs, 0, msgs.count());
                } else if (phases[p] != null) {
                    phases[p].consolidate(); // appended in (key, msn) order: one run already
                    applyToLeaf(leaf, phases[p], 0, phases[p].count());
                }
                if (p < ranges.size()) {
                    applyRange(leaf, ranges.get(p));
                }
            }
        } finally {
            for (MessageBuffer b : phases) {
                if (b != null) {
                    b.release();
                }
            }
        }
    }

    /** How many of {@code ranges} (in msn order) a keyed message of {@code msn} comes after: its phase. */
    private static int phaseOf(List<RangeMessage> ranges, long msn) {
        int lo = 0;
        int hi = ranges.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ranges.get(mid).msn() <= msn) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Applies range message {@code r}, older than every message not yet applied and newer than every
     * row, to the basements it meets: each present key in it gets a delete, or the value the
     * broadcast's functions make of its newest version, as a message of {@code r}'s msn. A basement
     * wholly inside a range delete that every snapshot sees goes away unread (not the first or the
     * last of the leaf, whose outer bounds the leaf does not record).
     */
    private void applyRange(LeafNode leaf, RangeMessage r) {
        long oldest = horizon.oldestSnapshot();
        long now = functions.nowMillis();
        for (int b = 0; b < leaf.basements.size(); b++) {
            byte[] lo = b == 0 ? null : leaf.pivots.get(b - 1);
            byte[] hi = b < leaf.pivots.size() ? leaf.pivots.get(b) : null;
            RangeMessage part = r.clipToChild(leaf.pivots, b);
            if (part == null) {
                continue;
            }
            boolean wholeBasement = lo != null && hi != null && Keys.compare(r.lower(), lo) <= 0
                    && (r.upper() == null || Keys.compare(r.upper(), hi) >= 0);
            if (r.isDelete() && wholeBasement && oldest >= r.msn()) {
                store.freeBlock(leaf.remove(b, b - 1));
                b--;
                continue;
            }
            Basement basement = store.pinBasement(leaf.basements.get(b));
            MessageBuffer changes = new MessageBuffer(store.memory());
            try {
                for (int p = basement.lowerBound(part.lower());
                        p < basement.count() && (part.upper() == null || basement.compareKey(p, part.upper()) < 0);
                        p = basement.keyEnd(p)) {
                    byte[] value = basement.newestValueAt(p, now);
                    if (value == null) {
                        continue; // absent already
                    }
                    byte[] key = basement.key(p);
                    byte[] updated = r.isDelete() ? null : UpdateList.applyWhilePresent(functions, key, value, r.updates());
                    long expiry = basement.expiryAt(p); // a broadcast keeps a row's expiry, as an update does
                    if (updated == null) {
                        changes.append(MessageType.DELETE, r.msn(), r.txnId(), key, null);
                    } else if (expiry == Long.MAX_VALUE) {
                        changes.append(MessageType.PUT, r.msn(), r.txnId(), key, updated);
                    } else {
                        changes.append(MessageType.PUT_EXPIRING, r.msn(), r.txnId(), key, Expiry.wrap(expiry, updated));
                    }
                }
                if (changes.count() > 0) {
                    changes.consolidate();
                    basement.apply(changes, 0, changes.count(), oldest, functions);
                    leaf.applied(b, basement, changes, 0, 0);
                    b += splitBasement(leaf, b, basement);
                }
            } finally {
                changes.release();
                store.unpin(basement, true);
            }
        }
        compactBasements(leaf);
    }

    /** Applies the sorted messages {@code [from, to)} of {@code msgs} to the leaf's basements. */
    void applyToLeaf(LeafNode leaf, MessageBuffer msgs, int from, int to) {
        long[] receiving = basementsReceiving(leaf, msgs, from, to);
        try (ReadAhead ahead = store.readAhead(receiving)) {
            int m = from;
            int b = 0;
            while (m < to) {
                int end = endOfBasement(leaf, b, msgs, m, to);
                if (end > m) {
                    long block = leaf.basements.get(b);
                    ahead.await(block);
                    Basement basement = store.pinBasement(block);
                    try {
                        if (basement.apply(msgs, m, end, horizon.oldestSnapshot(), functions)) {
                            leaf.applied(b, basement, msgs, m, end);
                        } // else its values were overwritten in place: same keys, same size
                        b += splitBasement(leaf, b, basement);
                    } finally {
                        store.unpin(basement, true);
                    }
                    m = end;
                }
                b++;
            }
        }
        compactBasements(leaf);
    }

    /** Where the messages from {@code m} (below {@code to}) for basement {@code b} of {@code leaf} end. */
    private static int endOfBasement(LeafNode leaf, int b, MessageBuffer msgs, int m, int to) {
        return b < leaf.pivots.size() ? Math.min(to, Math.max(m, msgs.lowerBound(leaf.pivots.get(b), false))) : to;
    }

    /** The blocks of the basements that messages {@code [from, to)} of {@code msgs} go to, in key order. */
    private static long[] basementsReceiving(LeafNode leaf, MessageBuffer msgs, int from, int to) {
        long[] blocks = new long[leaf.basements.size()];
        int n = 0;
        for (int b = 0, m = from; m < to && b < leaf.basements.size(); b++) {
            int end = endOfBasement(leaf, b, msgs, m, to);
            if (end > m) {
                blocks[n++] = leaf.basements.get(b);
                m = end;
            }
        }
        return Arrays.copyOf(blocks, n);
    }

    /** Splits an oversized basement (pinned, at position b) in halves; returns how many were added. */
    private int splitBasement(LeafNode leaf, int b, Basement basement) {
        if (basement.bytes() <= config.basementSize() || basement.count() < 2) {
            return 0;
        }
        int at = basement.splitPosition();
        if (at < 0) {
            return 0;
        }
        Basement right = basement.splitAt(at, store.allocateBlockNumber(), 0);
        store.addNew(right);
        try {
            leaf.rebuilt(b, basement);
            leaf.insertAfter(b, right);
            int addedRight = splitBasement(leaf, b + 1, right);
            int addedLeft = splitBasement(leaf, b, basement);
            return 1 + addedLeft + addedRight;
        } finally {
            store.unpin(right, true);
        }
    }

    /** Drops empty basements and merges neighbours that together fill less than half a basement. */
    void compactBasements(LeafNode leaf) {
        int b = 0;
        while (b + 1 < leaf.basements.size()) {
            int left = leaf.basementBytes.get(b);
            int right = leaf.basementBytes.get(b + 1);
            if (right <= EMPTY_BASEMENT) {
                store.freeBlock(leaf.remove(b + 1, b));
            } else if (left <= EMPTY_BASEMENT) {
                store.freeBlock(leaf.remove(b, b));
            } else if (left + right - EMPTY_BASEMENT <= config.basementSize() / 2) {
                Basement l = store.pinBasement(leaf.basements.get(b));
                try {
                    Basement r = store.pinBasement(leaf.basements.get(b + 1));
                    l.absorb(r);
                    store.free(r);
                    leaf.rebuilt(b, l);
                    leaf.remove(b + 1, b); // its block went with the basement
                } finally {
                    store.unpin(l, true);
                }
            } else {
                b++;
            }
        }
    }

    /**
     * Inserts the puts of {@code writes[from, to)} into the last basement of {@code leaf}, the
     * rightmost leaf of the sequential path ({@link Reshaper#appendRightmost}), up to and including
     * the put that fills it, skipping deletes; returns where it stopped.
     */
    int appendToLastBasement(LeafNode leaf, List<? extends TreeWrite> writes, int from, int to, long ts) {
        int last = leaf.basements.size() - 1;
        Basement b = store.pinBasement(leaf.basements.get(last));
        try {
            for (int i = from; i < to; i++) {
                TreeWrite w = writes.get(i);
                if (w.type() == MessageType.DELETE) {
                    continue;
                }
                b.appendLast(w.key(), w.value(), ts, w.type() == MessageType.PUT_EXPIRING);
                leaf.appended(last, b, w.key());
                if (b.bytes() > config.basementSize() && b.count() > 1) {
                    // Keep the full basement full and start a new one: sequential data never returns here.
                    // Room for the whole basement and then some: it splits once over its size.
                    Basement next = b.splitAt(b.count() - 1, store.allocateBlockNumber(),
                            config.basementSize() + config.basementSize() / 8);
                    store.addNew(next);
                    leaf.sealed(last, b);
                    leaf.insertAfter(last, next);
                    store.unpin(next, true);
                    return i + 1;
                }
            }
            return to;
        } finally {
            store.unpin(b, true);
        }
    }

    /** At least the largest key in {@code leaf}'s basements and its last pivot, or {@code null} when it has neither. */
    byte[] maxKey(LeafNode leaf) {
        byte[] held = maxHeld(leaf);
        // The last basement takes the sequential path's keys: at least its lower bound, though
        // deletes, range deletes and expiry may have emptied it.
        byte[] lastPivot = leaf.pivots.isEmpty() ? null : leaf.pivots.get(leaf.pivots.size() - 1);
        return Keys.max(held, lastPivot);
    }

    private byte[] maxHeld(LeafNode leaf) {
        for (int b = leaf.basements.size() - 1; b >= 0; b--) {
            if (leaf.basementBytes.get(b) <= EMPTY_BASEMENT) {
                continue;
            }
            Basement bs = store.pinBasement(leaf.basements.get(b));
            try {
                if (bs.count() > 0) {
                    return bs.key(bs.count() - 1);
                }
            } finally {
                store.unpin(bs, false);
            }
        }
        return null;
    }
}
