package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Multi-threaded time-series insert: {@value #SENSORS} sensors report once per time step, and each
 * transaction (one batch of the engine) writes one time step, a row for every sensor, into a single
 * table. N writer threads take the next unwritten time step in turn, so every step belongs to one
 * thread and no two transactions write the same key. A key is the sensor id (4 bytes) then the
 * timestamp in milliseconds (8 bytes), big-endian, so each sensor's rows are in time order and a
 * transaction appends to {@value #SENSORS} places of the key space; a value is a reading, a
 * status, a sequence number and the sensor's tags, 16 to 100 bytes, a pure function of sensor and
 * step. Records rows/s over the whole run and over its last 10%, and the latency of every
 * transaction across all threads. Afterwards a scan checks that every sensor has one row per step
 * written, with the right value; a wrong answer fails the run. The store is deleted afterwards.
 */
public final class TimeSeriesWorkload {
    /** Sensors, i.e. rows per transaction. */
    public static final int SENSORS = 1_000;
    /** The single table. */
    public static final String TABLE = "readings";
    private static final long BASE_MILLIS = 1_700_000_000_000L;
    private static final long STEP_MILLIS = 1_000;
    private static final int MIN_VALUE_BYTES = 16;
    private static final int MAX_VALUE_BYTES = 100;
    private static final byte[][] TAGS = new byte[SENSORS][];

    static {
        for (int s = 0; s < SENSORS; s++) {
            String tag = String.format(Locale.ROOT, "site=plant-%02d;line=%d;unit=%s;model=TX-%d;fw=2.%d.%d;",
                    s % 40, s % 7, s % 3 == 0 ? "celsius" : s % 3 == 1 ? "bar" : "rpm", 100 + s % 13, s % 5, s % 11);
            StringBuilder b = new StringBuilder(tag);
            while (b.length() < MAX_VALUE_BYTES) {
                b.append(tag);
            }
            TAGS[s] = b.toString().getBytes(StandardCharsets.US_ASCII);
        }
    }

    private TimeSeriesWorkload() {
    }

    /**
     * Runs the insert with {@code threads} writers on a fresh store and records phase
     * {@code timeseries-<threads>}.
     */
    public static PhaseResult run(BenchContext ctx, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads: " + threads);
        }
        Path dir = ctx.storeDir("timeseries");
        Scale sc = ctx.scale();
        long steps = sc.timeSeriesSteps();
        EngineAdapter e = ctx.openFresh(dir);
        PhaseResult r;
        try {
            Table table = e.table(TABLE);
            Progress progress = new Progress((int) steps, sc.timeSeriesMaxSeconds() * 1_000_000_000L);
            List<Writer> writers = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            Probe probe = Probe.start();
            try {
                List<Future<Void>> futures = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    Writer w = new Writer(e, table, progress, probe);
                    writers.add(w);
                    futures.add(pool.submit(w));
                }
                for (Future<Void> f : futures) {
                    f.get();
                }
            } catch (ExecutionException ex) {
                throw new IllegalStateException(ctx.engine() + ": a time-series writer failed", ex.getCause());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ctx.engine() + ": interrupted", ex);
            } finally {
                pool.shutdownNow();
            }
            e.flush();
            double seconds = probe.seconds();
            double cpu = probe.cpuSeconds();
            long written = probe.bytesWritten();
            long heap = probe.peakHeapBytes();
            long disk = e.diskBytes();
            int batches = progress.done.get();
            long rows = (long) batches * SENSORS;
            Latencies latencies = new Latencies("time-series batch");
            long logical = 0;
            for (Writer w : writers) {
                latencies.add(w.latencies);
                logical += w.logicalBytes;
            }
            long[] stepsWritten = Arrays.copyOf(progress.stepWritten, batches);
            Arrays.sort(stepsWritten);
            writeSeries(ctx, threads, progress, batches);
            check(ctx, table, stepsWritten);
            long[] batchEnd = Arrays.copyOf(progress.batchEnd, batches);
            Arrays.sort(batchEnd);
            String note = InsertWorkload.withWriterWait(
                    batches < steps ? "time cap reached at " + rows + " of " + steps * SENSORS + " rows" : "", e);
            r = new PhaseResult(sc.name(), "timeseries", "timeseries-" + threads, ctx.engine(),
                    ctx.codec().algorithm(), batches, rows, seconds, logical, written, disk, logical, cpu, heap,
                    latencies.micros(50), latencies.micros(99), latencies.micros(99.9), latencies.maxMicros(),
                    InsertWorkload.terminalRate(batchEnd, batches, rows, SENSORS), note);
        } finally {
            e.close();
        }
        ctx.results().record(r);
        BenchContext.deleteTree(dir);
        return r;
    }

    /**
     * With the system property {@code bench.batchSeries} set to a directory, writes every
     * transaction's end (seconds into the load) and duration (ms) to
     * {@code timeseries-<threads>-<engine>.txt} there, one line each, about in the order they
     * ended; before the check scan, so that a run that fails it leaves its series too.
     */
    private static void writeSeries(BenchContext ctx, int threads, Progress progress, int batches) {
        String dir = System.getProperty("bench.batchSeries");
        if (dir == null) {
            return;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < batches; i++) {
            b.append(String.format(Locale.ROOT, "%.4f %.2f%n", progress.batchEnd[i] / 1e9,
                    progress.batchNanos[i] / 1e6));
        }
        try {
            Path d = Files.createDirectories(Path.of(dir));
            Files.writeString(d.resolve("timeseries-" + threads + "-" + ctx.engine() + ".txt"), b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The thread count of a {@code timeseries-<threads>} phase. */
    public static int threads(PhaseResult r) {
        return Integer.parseInt(r.phase().substring(r.phase().lastIndexOf('-') + 1));
    }

    /** The key of {@code sensor}'s row of time step {@code step}. */
    public static byte[] key(int sensor, long step) {
        return ByteBuffer.allocate(12).putInt(sensor).putLong(BASE_MILLIS + step * STEP_MILLIS).array();
    }

    /** The value of {@code sensor}'s row of time step {@code step}. */
    public static byte[] value(int sensor, long step) {
        long h = IiBench.mix(step * SENSORS + sensor);
        int length = MIN_VALUE_BYTES + (int) Long.remainderUnsigned(h, MAX_VALUE_BYTES - MIN_VALUE_BYTES + 1);
        double reading = 20 + sensor % 50 + (h >>> 40 & 0xFFF) / 100.0;
        return ByteBuffer.allocate(length).putDouble(reading).putInt((int) (h >>> 20 & 3)).putInt((int) step)
                .put(TAGS[sensor], 0, length - MIN_VALUE_BYTES).array();
    }

    /** Scans the table: each sensor must have exactly the steps written, in order, with their values. */
    private static void check(BenchContext ctx, Table table, long[] written) {
        int[] sensor = {0};
        int[] index = {0};
        long[] seen = {0};
        table.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            if (index[0] == written.length) {
                sensor[0]++;
                index[0] = 0;
            }
            long step = written.length == 0 ? -1 : written[index[0]];
            if (sensor[0] >= SENSORS || !Arrays.equals(k, key(sensor[0], step))
                    || !Arrays.equals(v, value(sensor[0], step))) {
                throw new IllegalStateException(ctx.engine() + ": time-series row " + seen[0] + " is not sensor "
                        + sensor[0] + " step " + step + " or has a wrong value");
            }
            index[0]++;
            seen[0]++;
        });
        long expected = (long) written.length * SENSORS;
        if (seen[0] != expected) {
            throw new IllegalStateException(ctx.engine() + ": time-series table has " + seen[0] + " rows, expected "
                    + expected);
        }
    }

    /**
     * What the writers share: the next step to take, and per finished transaction (in the order
     * they finished) its step, end time and duration.
     */
    private static final class Progress {
        final AtomicLong next = new AtomicLong();
        final AtomicInteger done = new AtomicInteger();
        final long[] stepWritten;
        final long[] batchEnd;
        final long[] batchNanos;
        final long capNanos;

        Progress(int steps, long capNanos) {
            this.stepWritten = new long[steps];
            this.batchEnd = new long[steps];
            this.batchNanos = new long[steps];
            this.capNanos = capNanos;
        }
    }

    /** One writer thread: takes the next step, writes it for every sensor and commits, until none is left. */
    private static final class Writer implements Callable<Void> {
        private final EngineAdapter engine;
        private final Table table;
        private final Progress progress;
        private final Probe probe;
        private final Latencies latencies = new Latencies("time-series batch");
        private long logicalBytes;

        Writer(EngineAdapter engine, Table table, Progress progress, Probe probe) {
            this.engine = engine;
            this.table = table;
            this.progress = progress;
            this.probe = probe;
        }

        @Override
        public Void call() {
            long steps = progress.stepWritten.length;
            try {
                while (true) {
                    long step = progress.next.getAndIncrement();
                    if (step >= steps || probe.elapsedNanos() > progress.capNanos) {
                        return null;
                    }
                    long t0 = System.nanoTime();
                    for (int s = 0; s < SENSORS; s++) {
                        byte[] k = key(s, step);
                        byte[] v = value(s, step);
                        table.put(k, v);
                        logicalBytes += k.length + v.length;
                    }
                    engine.commit();
                    long took = System.nanoTime() - t0;
                    latencies.record(took);
                    int i = progress.done.getAndIncrement();
                    progress.batchEnd[i] = probe.elapsedNanos();
                    progress.batchNanos[i] = took;
                    progress.stepWritten[i] = step;
                }
            } catch (RuntimeException ex) {
                // The other writers stop before their next step.
                progress.next.set(steps);
                throw ex;
            }
        }
    }
}
