package io.betree.bench.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client threads of the update benchmark: N threads take the next batch in turn and run it until
 * the planned number of batches is done or the time cap has passed, each with a random generator of
 * its own (seeded from the thread's number, so a run is repeatable up to the threads' interleaving).
 * Records every batch's latency across all threads, when each finished, and how many times batches
 * were retried after a write conflict. A batch that throws stops the other threads before their next
 * batch and fails the run.
 */
final class BatchClients {
    private BatchClients() {
    }

    /** One batch, run on a client thread. */
    @FunctionalInterface
    interface Batch {
        /**
         * Runs one batch and commits it.
         *
         * @return how many times it was retried after a write conflict
         */
        int run(SplittableRandom random);
    }

    /**
     * What the clients did.
     *
     * @param batches batches committed
     * @param batchEnd when each finished, nanoseconds into the probe, ascending ({@code batches} long)
     * @param latencies every batch's latency
     * @param retries batches retried after a write conflict, all threads together
     * @param capped whether the time cap stopped the clients before every batch was done
     */
    record Outcome(int batches, long[] batchEnd, Latencies latencies, long retries, boolean capped) {
    }

    /**
     * Runs {@code planned} batches on {@code threads} threads, stopping at {@code capNanos} after the
     * probe's start.
     *
     * @param what names the batches in errors and slow-request events, e.g. {@code counters update}
     */
    static Outcome run(String what, int threads, int planned, long capNanos, long seed, Probe probe, Batch batch) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads: " + threads);
        }
        AtomicLong next = new AtomicLong();
        AtomicInteger done = new AtomicInteger();
        long[] batchEnd = new long[planned];
        Latencies[] latencies = new Latencies[threads];
        long[] retries = new long[threads];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Void>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int client = i;
                latencies[client] = new Latencies(what + " batch");
                SplittableRandom random = new SplittableRandom(IiBench.mix(seed * 1_000_003L + client));
                futures.add(pool.submit(() -> {
                    try {
                        while (next.getAndIncrement() < planned && probe.elapsedNanos() <= capNanos) {
                            long t0 = System.nanoTime();
                            retries[client] += batch.run(random);
                            latencies[client].record(System.nanoTime() - t0);
                            batchEnd[done.getAndIncrement()] = probe.elapsedNanos();
                        }
                        return null;
                    } catch (RuntimeException ex) {
                        next.set(planned);
                        throw ex;
                    }
                }));
            }
            for (Future<Void> f : futures) {
                f.get();
            }
        } catch (ExecutionException ex) {
            throw new IllegalStateException(what + ": a client thread failed", ex.getCause());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + ": interrupted", ex);
        } finally {
            pool.shutdownNow();
        }
        int batches = done.get();
        Latencies all = new Latencies(what + " batch");
        long retried = 0;
        for (int i = 0; i < threads; i++) {
            all.add(latencies[i]);
            retried += retries[i];
        }
        // Threads record their end times as they finish, nearly but not exactly in order.
        long[] ends = Arrays.copyOf(batchEnd, batches);
        Arrays.sort(ends);
        return new Outcome(batches, ends, all, retried, batches < planned);
    }
}
