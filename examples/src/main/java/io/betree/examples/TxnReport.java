package io.betree.examples;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.Transaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Measures the transactional engine: commit rates under {@link Durability#SYNC}, put latency while
 * checkpoints run under a sustained insert load, and recovery time after a kill. A quick report,
 * not a benchmark harness.
 *
 * <p>Usage: {@code TxnReport commits [seconds]}, {@code TxnReport checkpoint [seconds]},
 * {@code TxnReport recovery [logMiB]}; the data goes under {@code target/txn-report}.
 */
public final class TxnReport {
    private static final Path BASE = Path.of("target/txn-report");

    private TxnReport() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "commits";
        switch (mode) {
            case "commits" -> commits(args.length > 1 ? Integer.parseInt(args[1]) : 10);
            case "checkpoint" -> checkpointLatency(args.length > 1 ? Integer.parseInt(args[1]) : 60);
            case "recovery" -> recovery(args.length > 1 ? Integer.parseInt(args[1]) : 1024);
            case "recovery-writer" -> recoveryWriter(Path.of(args[1]), Long.parseLong(args[2]));
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    /** Small transactions (one 100-byte put) from 1 and from 16 threads under SYNC. */
    private static void commits(int seconds) throws Exception {
        for (int threads : new int[] {1, 16}) {
            Path dir = fresh("commits-" + threads);
            try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
                Index idx = env.openIndex("t");
                AtomicLong commits = new AtomicLong();
                long end = System.nanoTime() + seconds * 1_000_000_000L;
                Thread[] workers = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    final int id = t;
                    workers[t] = new Thread(() -> {
                        SplittableRandom rnd = new SplittableRandom(id);
                        byte[] value = new byte[100];
                        while (System.nanoTime() < end) {
                            try (Transaction txn = env.begin()) {
                                idx.put(txn, key(rnd.nextLong()), value);
                                txn.commit();
                            }
                            commits.incrementAndGet();
                        }
                    });
                    workers[t].start();
                }
                for (Thread w : workers) {
                    w.join();
                }
                System.out.printf("SYNC commits, %2d threads: %,.0f commits/s%n", threads, commits.get() / (double) seconds);
            }
        }
    }

    /**
     * One thread inserts random 100-byte rows without pause (ASYNC durability) while checkpoints
     * run every 5 seconds; reports the latency distribution of every put.
     */
    private static void checkpointLatency(int seconds) throws Exception {
        Path dir = fresh("checkpoint");
        EnvironmentOptions options = EnvironmentOptions.defaults().cacheBytes(Long.getLong("cache", 128L << 20)).durability(Durability.valueOf(System.getProperty("dur", "ASYNC")))
                .checkpointInterval(Duration.ofSeconds(Long.getLong("ckpt", 5)));
        int[] latencies = new int[20_000_000]; // nanoseconds, capped at 2.1 s
        int n = 0;
        try (Environment env = Environment.open(dir, options)) {
            Index idx = env.openIndex("t");
            SplittableRandom rnd = new SplittableRandom(7);
            byte[] value = new byte[100];
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long now = System.nanoTime();
            while (now < end && n < latencies.length) {
                rnd.nextBytes(value);
                idx.put(key(rnd.nextLong()), value);
                long after = System.nanoTime();
                latencies[n++] = (int) Math.min(Integer.MAX_VALUE, after - now);
                now = after;
            }
        }
        int[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        System.out.printf("puts: %,d in %d s (%,.0f/s) with a checkpoint every 5 s%n", n, seconds, n / (double) seconds);
        System.out.printf("latency: p50 %.1f us, p99 %.1f us, p99.9 %.1f us, p99.99 %.1f us, max %.1f ms%n",
                sorted[n / 2] / 1e3, sorted[(int) (n * 0.99)] / 1e3, sorted[(int) (n * 0.999)] / 1e3,
                sorted[(int) (n * 0.9999)] / 1e3, sorted[n - 1] / 1e6);
        long over50 = Arrays.stream(sorted).filter(l -> l > 50_000_000).count();
        System.out.printf("puts slower than 50 ms: %d%n", over50);
    }

    /** A child JVM writes {@code logMiB} of log with checkpoints off and halts; then we time the reopen. */
    private static void recovery(int logMiB) throws Exception {
        Path dir = fresh("recovery");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx256m", "-XX:MaxDirectMemorySize=512m", "-cp", System.getProperty("java.class.path"),
                TxnReport.class.getName(), "recovery-writer", dir.toString(), Long.toString((long) logMiB << 20))
                .inheritIO().start();
        int exit = child.waitFor();
        long logBytes;
        try (Stream<Path> s = Files.list(dir)) {
            logBytes = s.filter(p -> p.getFileName().toString().startsWith("wal-")).mapToLong(p -> p.toFile().length()).sum();
        }
        long start = System.nanoTime();
        long rows;
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(128L << 20))) {
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("writer exit %d; log %,d MiB; recovery (open) took %.1f s%n", exit, logBytes >> 20, seconds);
            rows = 0;
            try (var c = env.openIndex("t").scan()) {
                while (c.next()) {
                    rows++;
                }
            }
        }
        System.out.printf("rows after recovery: %,d%n", rows);
    }

    private static void recoveryWriter(Path dir, long logBytes) throws IOException {
        EnvironmentOptions options = EnvironmentOptions.defaults().cacheBytes(128L << 20).durability(Durability.NONE)
                .checkpointInterval(Duration.ZERO);
        Environment env = Environment.open(dir, options);
        Index idx = env.openIndex("t");
        env.checkpoint();
        SplittableRandom rnd = new SplittableRandom(11);
        byte[] value = new byte[1000];
        long rows = 0;
        while (true) {
            for (int i = 0; i < 10_000; i++) {
                rnd.nextBytes(value);
                idx.put(key(rnd.nextLong()), value);
                rows++;
            }
            long size;
            try (Stream<Path> s = Files.list(dir)) {
                size = s.filter(p -> p.getFileName().toString().startsWith("wal-")).mapToLong(p -> p.toFile().length()).sum();
            }
            if (size >= logBytes) {
                System.out.printf("writer: %,d rows, %,d MiB of log since the checkpoint; halting without close%n", rows,
                        size >> 20);
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
        }
    }

    private static byte[] key(long v) {
        byte[] k = new byte[8];
        for (int i = 0; i < 8; i++) {
            k[i] = (byte) (v >>> (56 - 8 * i));
        }
        return k;
    }

    private static Path fresh(String name) throws IOException {
        Path dir = BASE.resolve(name);
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.delete(p);
                }
            }
        }
        return dir;
    }
}
