package io.betree.internal.txn;

import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.log.DurableLog;
import io.betree.internal.log.WritesRecord;
import io.betree.internal.tree.BeTree;
import io.betree.internal.txn.spill.CommitRun;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Streams a large commit's writes from its {@link CommitRun}, a bounded batch at a time: into the log
 * as parts before the commit, and into a tree once the commit has its timestamp. The heap holds one
 * batch, whatever the commit's size.
 */
final class LargeCommitStream {
    /** Encoded bytes a logged part collects: large enough that parts are few, small for the heap. */
    static final long PART_BYTES = 4L << 20;
    /** Writes handed to a tree at once. */
    static final int APPLY_BATCH = 4096;

    private LargeCommitStream() {
    }

    /** Logs every write of {@code run} in parts; returns their LSNs in order. */
    static long[] logParts(DurableLog log, CommitRun run) {
        List<Long> lsns = new ArrayList<>();
        List<Op> part = new ArrayList<>();
        long bytes = 0;
        Iterator<Op> it = run.iterator();
        while (it.hasNext()) {
            Op op = it.next();
            part.add(op);
            bytes += op.encodedBytes();
            if (bytes >= PART_BYTES) {
                lsns.add(log.appendWrites(new WritesRecord(lsns.size(), part)));
                part.clear();
                bytes = 0;
            }
        }
        if (!part.isEmpty()) {
            lsns.add(log.appendWrites(new WritesRecord(lsns.size(), part)));
        }
        long[] out = new long[lsns.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = lsns.get(i);
        }
        return out;
    }

    /**
     * Writes {@code run}'s writes to index {@code indexId} into {@code tree} at {@code ts}, a batch at
     * a time, letting the tree's flushers catch up between batches (as back-pressure holds back any
     * writer); returns the nanoseconds spent waiting for them.
     */
    static long apply(CommitRun run, int indexId, BeTree tree, long ts) {
        long waited = 0;
        List<WriteOp> batch = new ArrayList<>(APPLY_BATCH);
        Iterator<Op> it = run.iterator(indexId);
        while (it.hasNext()) {
            batch.add(WriteOp.replayed(it.next(), tree));
            if (batch.size() == APPLY_BATCH || !it.hasNext()) {
                tree.writeAll(batch, ts);
                batch.clear();
                waited += BeTree.holdWritersBack(List.of(tree), 0);
            }
        }
        return waited;
    }
}
