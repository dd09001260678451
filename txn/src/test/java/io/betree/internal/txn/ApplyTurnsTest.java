package io.betree.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ApplyTurnsTest {

    /**
     * Threads take turns at two keys under a gate, as commits do, then run them with random pauses:
     * each key sees its turns run in the order taken, every turn runs once, a turn that must run on
     * its own thread does, and a failing turn throws to its own caller only.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void runsEachKeysTurnsInOrderOnceEach() throws Exception {
        ApplyTurns<String> turns = new ApplyTurns<>();
        ReentrantLock gate = new ReentrantLock();
        String[] keys = {"a", "b"};
        Map<String, List<Long>> ran = new ConcurrentHashMap<>();
        for (String k : keys) {
            ran.put(k, new ArrayList<>());
        }
        AtomicReference<String> wrong = new AtomicReference<>();
        int threads = 12;
        int commitsPerThread = 2_000;
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            long seed = w;
            Thread t = new Thread(() -> {
                Random rnd = new Random(seed);
                for (int c = 0; c < commitsPerThread && wrong.get() == null; c++) {
                    List<String> touched = rnd.nextBoolean() ? List.of(keys[rnd.nextInt(2)]) : List.of("a", "b");
                    long[] taken = new long[touched.size()];
                    gate.lock();
                    try {
                        for (int i = 0; i < taken.length; i++) {
                            taken[i] = turns.take(touched.get(i));
                        }
                    } finally {
                        gate.unlock();
                    }
                    if (rnd.nextInt(8) == 0) {
                        Thread.yield();
                    }
                    for (int i = 0; i < taken.length; i++) {
                        String key = touched.get(i);
                        long turn = taken[i];
                        boolean own = rnd.nextInt(20) == 0;
                        boolean fail = rnd.nextInt(50) == 0;
                        Thread caller = Thread.currentThread();
                        Runnable writes = () -> {
                            // Only the thread running turns touches the list: no lock needed.
                            ran.get(key).add(turn);
                            if (own && Thread.currentThread() != caller) {
                                wrong.set("turn " + turn + " of " + key + " ran on another thread");
                            }
                            if (fail) {
                                throw new IllegalStateException("turn " + turn);
                            }
                        };
                        try {
                            turns.run(key, turn, writes, own);
                            if (fail) {
                                wrong.set("turn " + turn + " of " + key + " should have thrown");
                            }
                        } catch (IllegalStateException e) {
                            if (!fail || !e.getMessage().equals("turn " + turn)) {
                                wrong.set("turn " + turn + " of " + key + " threw " + e.getMessage());
                            }
                        }
                    }
                }
            });
            t.start();
            workers.add(t);
        }
        for (Thread t : workers) {
            t.join();
        }
        assertEquals(null, wrong.get());
        int total = 0;
        for (String k : keys) {
            List<Long> order = ran.get(k);
            for (int i = 0; i < order.size(); i++) {
                assertEquals(i + 1, order.get(i), "turn order of " + k);
            }
            total += order.size();
        }
        assertTrue(total >= threads * commitsPerThread, "every commit ran at least one turn");
    }

    @Test
    void anErrorReachesTheCallerAndLaterTurnsStillRun() {
        ApplyTurns<String> turns = new ApplyTurns<>();
        long first = turns.take("k");
        long second = turns.take("k");
        OutOfMemoryError oom = new OutOfMemoryError("test");
        assertSame(oom, assertThrows(OutOfMemoryError.class, () -> turns.run("k", first, () -> {
            throw oom;
        }, false)));
        boolean[] ran = new boolean[1];
        turns.run("k", second, () -> ran[0] = true, false);
        assertTrue(ran[0]);
    }
}
