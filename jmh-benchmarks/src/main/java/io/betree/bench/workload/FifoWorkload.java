package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import java.nio.file.Path;

/**
 * Delete-FIFO: the iiBench table used as a queue. First {@code fifoQueueRows} rows are inserted
 * (not measured); then, batch by batch, 1,000 new rows are inserted and the 1,000 oldest deleted
 * (blind deletes from all four indexes), so the live set stays the same size. Records the churn
 * rate and its terminal rate, the on-disk size over time (it must stay bounded), and the latency
 * of reading the queue's head, the oldest live row, which sits just after every key deleted so far
 * ({@code series/fifo-<engine>.csv}). A head that is not the expected row fails the run.
 */
public final class FifoWorkload {
    private FifoWorkload() {
    }

    /** Runs the workload on a fresh store and records phases {@code fifo} and {@code fifo-head}. */
    public static PhaseResult[] run(BenchContext ctx) {
        Path dir = ctx.storeDir("fifo");
        Scale sc = ctx.scale();
        EngineAdapter e = ctx.openFresh(dir);
        PhaseResult churn;
        PhaseResult head;
        try {
            IiBench t = new IiBench(e);
            long id = 1;
            long fillCap = System.nanoTime() + sc.fifoMaxSeconds() * 1_000_000_000L;
            while (id <= sc.fifoQueueRows() && System.nanoTime() < fillCap) {
                for (int i = 0; i < IiBench.BATCH_ROWS; i++) {
                    t.insert(id++);
                }
                e.commit();
            }
            e.flush();
            long queue = id - 1;
            long diskAfterFill = e.diskBytes();
            long oldest = 1;
            int batches = (int) (sc.fifoChurnRows() / IiBench.BATCH_ROWS);
            int headEvery = (int) Math.max(1, batches / Math.max(1, sc.fifoHeadReads()));
            long capNanos = sc.fifoMaxSeconds() * 1_000_000_000L;
            long[] batchEnd = new long[batches];
            Latencies latencies = new Latencies("fifo batch");
            Latencies headLatencies = new Latencies("fifo head read");
            long headNanos = 0;
            double firstHead = Double.NaN;
            double lastHead = Double.NaN;
            long maxDisk = diskAfterFill;
            long[] headId = new long[1];
            Probe probe = Probe.start();
            int done = 0;
            try (Series s = new Series(ctx.results().series(ctx.seriesName("fifo")), "elapsed_s", "rows_inserted",
                    "rows_deleted", "rows_per_s", "disk_mib", "head_read_us")) {
                while (done < batches) {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < IiBench.BATCH_ROWS; i++) {
                        t.insert(id++);
                    }
                    for (int i = 0; i < IiBench.BATCH_ROWS; i++) {
                        t.delete(oldest++);
                    }
                    e.commit();
                    latencies.record(System.nanoTime() - t0);
                    long now = probe.elapsedNanos();
                    batchEnd[done++] = now;
                    if (done % headEvery == 0 || done == batches || now > capNanos) {
                        long h0 = System.nanoTime();
                        long found = t.primary().scan(null, null, 1, (k, v) -> headId[0] = IiBench.id(k));
                        long headTime = System.nanoTime() - h0;
                        if (found != 1 || headId[0] != oldest) {
                            throw new IllegalStateException(ctx.engine() + ": queue head is " + headId[0]
                                    + " (found " + found + "), expected " + oldest);
                        }
                        headLatencies.record(headTime);
                        headNanos += headTime;
                        firstHead = Double.isNaN(firstHead) ? headTime / 1e3 : firstHead;
                        lastHead = headTime / 1e3;
                        long disk = e.diskBytes();
                        maxDisk = Math.max(maxDisk, disk);
                        long rowsDone = (long) done * IiBench.BATCH_ROWS;
                        s.add(now / 1e9, queue + rowsDone, rowsDone, rateSince(batchEnd, done, headEvery),
                                disk / 1048576.0, headTime / 1e3);
                    }
                    if (now > capNanos) {
                        break;
                    }
                }
            }
            e.flush();
            double seconds = probe.seconds();
            long rows = (long) done * IiBench.BATCH_ROWS;
            long disk = e.diskBytes();
            maxDisk = Math.max(maxDisk, disk);
            String note = String.format(java.util.Locale.ROOT,
                    "queue=%d rows; disk after fill %.1f MiB, max %.1f MiB, end %.1f MiB%s", queue,
                    diskAfterFill / 1048576.0, maxDisk / 1048576.0, disk / 1048576.0,
                    done < batches ? "; time cap reached at " + rows + " of " + sc.fifoChurnRows() + " rows" : "");
            note = InsertWorkload.withWriterWait(note, e);
            long live = queue * IiBench.ROW_BYTES;
            churn = new PhaseResult(sc.name(), "fifo", "fifo", ctx.engine(), ctx.codec().algorithm(), done, rows,
                    seconds, rows * (IiBench.ROW_BYTES + IiBench.DELETE_BYTES), probe.bytesWritten(), disk, live,
                    probe.cpuSeconds(), probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99),
                    latencies.micros(99.9), latencies.maxMicros(),
                    InsertWorkload.terminalRate(batchEnd, done, rows, IiBench.BATCH_ROWS), note);
            head = new PhaseResult(sc.name(), "fifo", "fifo-head", ctx.engine(), ctx.codec().algorithm(),
                    headLatencies.count(), headLatencies.count(), headNanos / 1e9, 0, -1, disk, live, Double.NaN,
                    0, headLatencies.micros(50), headLatencies.micros(99), headLatencies.micros(99.9),
                    headLatencies.maxMicros(), Double.NaN,
                    String.format(java.util.Locale.ROOT, "head read first %.0f us, last %.0f us, after %d deletes",
                            firstHead, lastHead, rows));
        } finally {
            e.close();
        }
        ctx.results().record(churn);
        ctx.results().record(head);
        BenchContext.deleteTree(dir);
        return new PhaseResult[] {churn, head};
    }

    /** Rows per second over the last {@code n} batches ending at batch {@code done}. */
    private static double rateSince(long[] batchEnd, int done, int n) {
        int from = Math.max(0, done - n);
        long start = from == 0 ? 0 : batchEnd[from - 1];
        return (double) (done - from) * IiBench.BATCH_ROWS / ((batchEnd[done - 1] - start) / 1e9);
    }
}
