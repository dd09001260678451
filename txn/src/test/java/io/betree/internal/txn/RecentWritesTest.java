package io.betree.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RecentWritesTest {

    /**
     * Random commits of random keys (some written again and again, so slots are updated, reused and
     * the table rebuilt), the horizon moving behind them: every fresh key must report its newest
     * commit, and a stale one nothing above the horizon.
     */
    @Test
    void agreesWithAModel() {
        for (long seed = 1; seed <= 20; seed++) {
            Random rnd = new Random(seed);
            RecentWrites table = new RecentWrites();
            Map<Long, Long> newest = new HashMap<>();
            long horizon = 0;
            int keySpace = 1 + rnd.nextInt(50_000);
            for (long ts = 1; ts <= 2_000; ts++) {
                int writes = rnd.nextInt(200);
                for (int w = 0; w < writes; w++) {
                    // Small hashes land in neighbouring slots and make long probe chains.
                    long hash = rnd.nextBoolean() ? rnd.nextInt(keySpace) : rnd.nextLong();
                    table.put(hash, ts);
                    newest.put(hash, ts);
                }
                if (rnd.nextInt(10) == 0) {
                    horizon = Math.max(horizon, ts - rnd.nextInt(50));
                    table.advanceHorizon(horizon);
                }
            }
            for (Map.Entry<Long, Long> e : newest.entrySet()) {
                long got = table.get(e.getKey());
                if (e.getValue() > horizon) {
                    assertEquals(e.getValue(), got, "seed " + seed + ", hash " + e.getKey());
                } else {
                    assertTrue(got <= horizon, "seed " + seed + ": a stale key reports " + got);
                }
            }
            for (int probe = 0; probe < 10_000; probe++) {
                long hash = rnd.nextLong();
                if (!newest.containsKey(hash)) {
                    assertEquals(0, table.get(hash), "seed " + seed + ": a key never written");
                }
            }
        }
    }

    /**
     * Lookups racing with the writer never see a timestamp that the key was not given: at worst an
     * older one, or none.
     */
    @Test
    void lookupsRacingWithTheWriterSeeOnlyTimestampsTheKeyHad() throws Exception {
        RecentWrites table = new RecentWrites();
        int keys = 4_096;
        Map<Long, Set<Long>> given = new ConcurrentHashMap<>();
        for (long k = 0; k < keys; k++) {
            given.put(k, ConcurrentHashMap.newKeySet());
        }
        String wrong = raceReadersWithWriter(rnd -> {
            long hash = rnd.nextInt(keys);
            long got = table.get(hash);
            return got != 0 && !given.get(hash).contains(got) ? "key " + hash + " reported commit " + got
                    + ", never given it" : null;
        }, () -> {
            Random rnd = new Random(7);
            for (long ts = 1; ts <= 20_000; ts++) {
                Set<Long> written = new HashSet<>();
                for (int w = 0; w < 20; w++) {
                    long hash = rnd.nextInt(keys);
                    if (written.add(hash)) {
                        given.get(hash).add(ts); // before the put, so a reader that sees it finds it here
                        table.put(hash, ts);
                    }
                }
                table.advanceHorizon(Math.max(0, ts - 10));
            }
        });
        assertEquals(null, wrong);
    }

    /**
     * A lookup never misses an entry that was fresh before it began, even while the writer rebuilds
     * the table into a reused array: keys written by every commit must be found at that commit or later.
     */
    @Test
    void lookupsDuringRebuildsMissNoFreshEntry() throws Exception {
        RecentWrites table = new RecentWrites();
        int steady = 64;
        AtomicLong completed = new AtomicLong();
        String wrong = raceReadersWithWriter(rnd -> {
            long before = completed.get();
            long hash = -1 - rnd.nextInt(steady);
            long got = table.get(hash);
            return got < before ? "key " + hash + " reported commit " + got + ", after commit " + before
                    + " wrote it" : null;
        }, () -> {
            Random rnd = new Random(11);
            for (long ts = 1; ts <= 30_000; ts++) {
                for (long k = 1; k <= steady; k++) {
                    table.put(-k, ts);
                }
                for (int w = 0; w < 40; w++) {
                    table.put(rnd.nextLong() & Long.MAX_VALUE, ts);
                }
                completed.set(ts);
                table.advanceHorizon(ts - 1);
            }
        });
        assertEquals(null, wrong);
    }

    /**
     * Runs {@code writer} on this thread while two reader threads repeat {@code check} (given a
     * random source of their own), until the writer is done or a check returns what went wrong;
     * returns the first such report, or null.
     */
    static String raceReadersWithWriter(Function<Random, String> check, Runnable writer)
            throws InterruptedException {
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> wrong = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Random rnd = new Random(r);
            Thread t = new Thread(() -> {
                while (!done.get() && wrong.get() == null) {
                    String problem = check.apply(rnd);
                    if (problem != null) {
                        wrong.compareAndSet(null, problem);
                    }
                }
            });
            t.start();
            readers.add(t);
        }
        try {
            writer.run();
        } finally {
            done.set(true);
            for (Thread t : readers) {
                t.join();
            }
        }
        return wrong.get();
    }
}
