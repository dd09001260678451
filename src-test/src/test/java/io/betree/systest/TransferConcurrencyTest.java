package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.WriteConflictException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bank transfers under snapshot isolation: 8 threads move money between 200 accounts in
 * read-modify-write transactions (retrying on {@link WriteConflictException}, and aborting some on
 * purpose), each transfer also bumping both accounts' transfer counters and logging itself in a
 * third index; 2 reader threads check in each snapshot that the total is constant (by a scan and by
 * gets), that the counters add up to twice the logged transfers, and that every account's balance
 * and counter follow from the logged transfers. At the end (and after a reopen) every acknowledged
 * transfer, and nothing else, is there. Plus the classic lost-update checks: of two transactions
 * that read-modify-write one key, exactly one commits.
 *
 * <p>{@code -Dbetree.seed=N} fixes the random choices (thread timing still varies);
 * {@code -Dbetree.transferMillis=N} sets how long the transfer threads run (default 8000).
 */
class TransferConcurrencyTest {
    private static final int ACCOUNTS = 200;
    private static final long INITIAL = 1_000;
    private static final int WRITERS = 8;
    private static final int READERS = 2;
    private static final long RUN_MILLIS = Long.getLong("betree.transferMillis", 8_000);

    @TempDir
    Path dir;

    private static EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20)
                .checkpointInterval(Duration.ofMillis(150)).durability(Durability.SYNC);
    }

    private static IndexOptions shape() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    static byte[] accountKey(int account) {
        return ByteBuffer.allocate(4).putInt(account).array();
    }

    static byte[] account(long balance, long counter) {
        return ByteBuffer.allocate(16).putLong(balance).putLong(counter).array();
    }

    static long balance(byte[] v) {
        return ByteBuffer.wrap(v).getLong(0);
    }

    static long counter(byte[] v) {
        return ByteBuffer.wrap(v).getLong(8);
    }

    static byte[] transferKey(long id) {
        return ByteBuffer.allocate(8).putLong(id).array();
    }

    static byte[] transfer(int from, int to, long amount) {
        return ByteBuffer.allocate(16).putInt(from).putInt(to).putLong(amount).array();
    }

    /** What a snapshot holds; {@link #check} verifies everything that must hold in any snapshot. */
    private static final class View {
        final long[] balances = new long[ACCOUNTS];
        final long[] counters = new long[ACCOUNTS];
        final Set<Long> transferIds = new HashSet<>();
        long scanTotal;
        long getTotal;

        static View read(Index balancesIdx, Index transfers, Transaction txn) {
            View v = new View();
            int rows = 0;
            try (Cursor c = balancesIdx.scan(txn, null, null)) {
                while (c.next()) {
                    int a = ByteBuffer.wrap(c.key()).getInt();
                    assertEquals(rows, a, "scan skipped or repeated an account");
                    v.balances[a] = balance(c.value());
                    v.counters[a] = counter(c.value());
                    v.scanTotal += v.balances[a];
                    rows++;
                }
            }
            assertEquals(ACCOUNTS, rows, "accounts seen by the scan");
            for (int a = 0; a < ACCOUNTS; a++) {
                byte[] value = balancesIdx.get(txn, accountKey(a));
                assertNotNull(value, "account " + a + " missing from get");
                assertEquals(v.balances[a], balance(value), "get and scan disagree on account " + a);
                assertEquals(v.counters[a], counter(value), "get and scan disagree on the counter of account " + a);
                v.getTotal += balance(value);
            }
            long[] netFlow = new long[ACCOUNTS];
            long[] touched = new long[ACCOUNTS];
            try (Cursor c = transfers.scan(txn, null, null)) {
                while (c.next()) {
                    ByteBuffer t = ByteBuffer.wrap(c.value());
                    int from = t.getInt();
                    int to = t.getInt();
                    long amount = t.getLong();
                    netFlow[from] -= amount;
                    netFlow[to] += amount;
                    touched[from]++;
                    touched[to]++;
                    v.transferIds.add(ByteBuffer.wrap(c.key()).getLong());
                }
            }
            for (int a = 0; a < ACCOUNTS; a++) {
                assertEquals(INITIAL + netFlow[a], v.balances[a], "balance of account " + a
                        + " does not follow from the logged transfers in the same snapshot");
                assertEquals(touched[a], v.counters[a], "transfer counter of account " + a
                        + " does not match the logged transfers in the same snapshot");
            }
            return v;
        }

        void check() {
            assertEquals(INITIAL * ACCOUNTS, scanTotal, "total by scan");
            assertEquals(INITIAL * ACCOUNTS, getTotal, "total by gets");
            long counterSum = 0;
            for (long c : counters) {
                counterSum += c;
            }
            assertEquals(2L * transferIds.size(), counterSum, "counters vs logged transfers");
        }
    }

    @Test
    void concurrentTransfersConserveMoney() throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "TransferConcurrencyTest: seed %d, %d ms%n", seed, RUN_MILLIS);
        try {
            runTransfers(seed);
        } catch (AssertionError | Exception e) {
            throw new AssertionError("transfers failed; rerun with -Dbetree.seed=" + seed + ": " + e.getMessage(), e);
        }
    }

    private void runTransfers(long seed) throws Exception {
        Set<Long> committed = ConcurrentHashMap.newKeySet();
        AtomicLong conflicts = new AtomicLong();
        AtomicLong aborted = new AtomicLong();
        AtomicLong snapshots = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Environment env = Environment.open(dir, options())) {
            Index balances = env.openIndex("balances", shape());
            Index transfers = env.openIndex("transfers", shape());
            try (Transaction txn = env.begin()) {
                for (int a = 0; a < ACCOUNTS; a++) {
                    balances.put(txn, accountKey(a), account(INITIAL, 0));
                }
                txn.commit();
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                threads.add(new Thread(() -> {
                    Random rnd = new Random(seed + writer);
                    long n = 0;
                    try {
                        while (System.nanoTime() < deadline && failure.get() == null) {
                            int from = rnd.nextInt(ACCOUNTS);
                            int to = (from + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                            long wanted = 1 + rnd.nextInt(100);
                            boolean abort = rnd.nextInt(20) == 0;
                            while (true) {
                                long id = ((long) writer << 40) | n++;
                                try (Transaction txn = env.begin()) {
                                    byte[] a = balances.get(txn, accountKey(from));
                                    byte[] b = balances.get(txn, accountKey(to));
                                    long amount = Math.min(wanted, balance(a));
                                    balances.put(txn, accountKey(from), account(balance(a) - amount, counter(a) + 1));
                                    balances.put(txn, accountKey(to), account(balance(b) + amount, counter(b) + 1));
                                    transfers.put(txn, transferKey(id), transfer(from, to, amount));
                                    if (abort) {
                                        aborted.incrementAndGet();
                                        break; // close() aborts
                                    }
                                    txn.commit();
                                    committed.add(id);
                                    break;
                                } catch (WriteConflictException e) {
                                    conflicts.incrementAndGet();
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "transfer-" + w));
            }
            for (int r = 0; r < READERS; r++) {
                threads.add(new Thread(() -> {
                    try {
                        while (System.nanoTime() < deadline && failure.get() == null) {
                            try (Transaction txn = env.begin()) {
                                View.read(balances, transfers, txn).check();
                            }
                            snapshots.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "auditor-" + r));
            }
            long start = System.nanoTime();
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(RUN_MILLIS + 120_000);
                assertFalse(t.isAlive(), t.getName() + " hangs");
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw new AssertionError("a worker failed: " + failure.get(), failure.get());
            }
            System.out.printf(Locale.ROOT,
                    "TransferConcurrencyTest: %d transfers committed (%.0f/s), %d write conflicts retried, %d aborted "
                            + "on purpose, %d audited snapshots in %.1f s%n",
                    committed.size(), committed.size() / seconds, conflicts.get(), aborted.get(), snapshots.get(),
                    seconds);
            assertTrue(committed.size() > 100, "too few transfers committed: " + committed.size());
            assertTrue(snapshots.get() > 0, "no snapshot was audited");
            checkFinal(env, balances, transfers, committed, "at the end");
        }
        try (Environment env = Environment.open(dir, options())) {
            checkFinal(env, env.openIndex("balances", shape()), env.openIndex("transfers", shape()), committed,
                    "after a reopen");
        }
    }

    private static void checkFinal(Environment env, Index balances, Index transfers, Set<Long> committed, String when) {
        try (Transaction txn = env.begin()) {
            View v = View.read(balances, transfers, txn);
            v.check();
            assertEquals(committed.size(), v.transferIds.size(), "logged transfers " + when);
            Set<Long> missing = new HashSet<>(committed);
            missing.removeAll(v.transferIds);
            Set<Long> extra = new HashSet<>(v.transferIds);
            extra.removeAll(committed);
            assertTrue(missing.isEmpty(), "acknowledged transfers missing " + when + ": " + missing);
            assertTrue(extra.isEmpty(), "transfers never acknowledged (aborted or failed) are visible " + when + ": "
                    + extra);
            long counterSum = 0;
            for (long c : v.counters) {
                counterSum += c;
            }
            assertEquals(2L * committed.size(), counterSum, "counter sum " + when);
        }
    }

    // ------------------------------------------------------------------ lost updates

    private static byte[] num(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    private static long num(byte[] b) {
        return ByteBuffer.wrap(b).getLong();
    }

    @Test
    void lostUpdateIsImpossibleWhenBothWriteBeforeEitherCommits() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("counters", shape());
            byte[] k = {1};
            idx.put(k, num(100));
            Transaction t1 = env.begin();
            Transaction t2 = env.begin();
            long v1 = num(idx.get(t1, k));
            long v2 = num(idx.get(t2, k));
            idx.put(t1, k, num(v1 + 1));
            idx.put(t2, k, num(v2 + 1));
            t1.commit();
            assertThrows(WriteConflictException.class, t2::commit);
            assertFalse(t2.isActive(), "a conflicting transaction is aborted");
            assertThrows(IllegalStateException.class, t2::commit);
            t2.close();
            assertEquals(101, num(idx.get(k)));
        }
    }

    @Test
    void lostUpdateIsImpossibleWhenTheOtherCommittedFirst() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("counters", shape());
            byte[] k = {1};
            idx.put(k, num(100));
            try (Transaction t1 = env.begin(); Transaction t2 = env.begin()) {
                idx.put(t1, k, num(num(idx.get(t1, k)) + 1));
                t1.commit();
                assertEquals(100, num(idx.get(t2, k)), "t2 still reads its snapshot");
                assertThrows(WriteConflictException.class, () -> idx.put(t2, k, num(101)),
                        "writing a key committed after the snapshot fails at once");
                assertFalse(t2.isActive());
                assertThrows(IllegalStateException.class, t2::commit);
            }
            assertEquals(101, num(idx.get(k)));
        }
    }

    @Test
    void deleteAndUpdateOfOneKeyConflict() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("counters", shape());
            byte[] k = {7};
            idx.put(k, num(1));
            Transaction t1 = env.begin();
            Transaction t2 = env.begin();
            idx.delete(t1, k);
            idx.put(t2, k, num(2));
            t2.commit();
            assertThrows(WriteConflictException.class, t1::commit);
            assertEquals(2, num(idx.get(k)));
        }
    }

    @Test
    void aWriteOutsideTransactionsConflictsWithATransactionThatBeganBefore() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("counters", shape());
            byte[] k = {3};
            idx.put(k, num(1));
            try (Transaction t = env.begin()) {
                idx.put(k, num(5)); // auto-commit, after t's snapshot
                assertEquals(1, num(idx.get(t, k)));
                assertThrows(WriteConflictException.class, () -> idx.put(t, k, num(2)));
            }
            assertEquals(5, num(idx.get(k)));
        }
    }

    @Test
    void disjointWritesAndReadOnlyTransactionsDoNotConflict() {
        try (Environment env = Environment.open(dir, options())) {
            Index a = env.openIndex("a", shape());
            Index b = env.openIndex("b", shape());
            byte[] k = {1};
            Transaction t1 = env.begin();
            Transaction t2 = env.begin();
            Transaction reader = env.begin();
            Transaction aborter = env.begin();
            assertNull(a.get(reader, k));
            a.put(aborter, k, num(9));
            aborter.abort();
            a.put(t1, k, num(1));
            b.put(t2, k, num(2)); // the same key in another index
            a.put(t2, new byte[] {2}, num(3));
            t1.commit();
            t2.commit();
            assertNull(a.get(reader, k), "the reader keeps its snapshot");
            reader.commit(); // read-only: nothing to conflict with
            assertEquals(1, num(a.get(k)));
            assertEquals(2, num(b.get(k)));
            assertEquals(3, num(a.get(new byte[] {2})));
        }
    }

    /**
     * Threads increment one counter in read-modify-write transactions, meeting at a barrier after
     * every thread has begun and read, so that all snapshots of a round overlap: exactly one commit
     * per round succeeds, the others fail with a write conflict, and no increment is lost.
     */
    @Test
    void concurrentIncrementsOfOneCounterAreNeverLost() throws Exception {
        int threads = 4;
        int perThread = 300;
        try (Environment env = Environment.open(dir, options().durability(Durability.ASYNC))) {
            Index idx = env.openIndex("counters", shape());
            byte[] k = {42};
            idx.put(k, num(0));
            CyclicBarrier barrier = new CyclicBarrier(threads);
            AtomicLong commits = new AtomicLong();
            AtomicLong conflicts = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(new Thread(() -> {
                    try {
                        for (int i = 0; i < perThread; i++) {
                            barrier.await(30, TimeUnit.SECONDS);
                            try (Transaction txn = env.begin()) {
                                long v = num(idx.get(txn, k));
                                // Everyone has read before anyone writes: all snapshots overlap.
                                barrier.await(30, TimeUnit.SECONDS);
                                idx.put(txn, k, num(v + 1));
                                txn.commit();
                                commits.incrementAndGet();
                            } catch (WriteConflictException e) {
                                conflicts.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        barrier.reset();
                    }
                }));
            }
            workers.forEach(Thread::start);
            for (Thread w : workers) {
                w.join(120_000);
                assertFalse(w.isAlive(), "an incrementer hangs");
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            System.out.printf(Locale.ROOT, "TransferConcurrencyTest: %d increments committed, %d conflicts%n",
                    commits.get(), conflicts.get());
            assertEquals(threads * perThread, commits.get() + conflicts.get());
            assertEquals(commits.get(), num(idx.get(k)), "increments lost");
            assertEquals(perThread, commits.get(), "exactly one of each round's overlapping transactions commits");
        }
    }

    @Test
    void writeSetsAreCopied() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("copies", shape());
            byte[] k = {1};
            byte[] v = {1, 2, 3};
            try (Transaction t = env.begin()) {
                idx.put(t, k, v);
                v[0] = 9;
                k[0] = 2;
                assertArrayEquals(new byte[] {1, 2, 3}, idx.get(t, new byte[] {1}));
                t.commit();
            }
            assertArrayEquals(new byte[] {1, 2, 3}, idx.get(new byte[] {1}));
            assertNull(idx.get(new byte[] {2}));
        }
    }
}
