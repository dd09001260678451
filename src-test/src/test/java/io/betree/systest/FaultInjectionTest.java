package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.betree.BetreeException;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.WriteConflictException;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage faults under the {@link AccountsWorkload}: a {@link FaultInjectingStorageEnv} over the real
 * file system fails a log write, a log fsync, runs out of space, tears a write, or loses everything
 * not synced ({@code crash()}), and a checkpoint fails half-way through writing or syncing the data
 * file. In every case the failing call must throw a {@link BetreeException} (no hang: each round has
 * a time limit; no other exception type); the test then simulates a power cut, reopens the directory
 * with a fault-free env and checks that it holds exactly the state after {@code k} commits, with
 * {@code k} at least the last acknowledged commit under {@link Durability#SYNC} (at least the last
 * successful checkpoint otherwise) and at most the last attempted one, and finally that the
 * recovered environment accepts, logs and recovers new commits.
 *
 * <p>Each test runs {@code -Dbetree.faultRounds=N} rounds (default 6) with seeds derived from
 * {@code -Dbetree.seed=N} (printed).
 */
class FaultInjectionTest {
    private static final int ROUNDS = Integer.getInteger("betree.faultRounds", 6);
    private static final Duration ROUND_LIMIT = Duration.ofSeconds(60);
    private static final Predicate<Path> LOG_FILES = p -> p.getFileName().toString().startsWith("wal-");
    private static final Predicate<Path> DATA_FILE = p -> p.getFileName().toString().equals("betree.data");

    @TempDir
    Path work;

    /** One fault round: what to arm once the warm-up has committed. */
    private interface Fault {
        void arm(FaultInjectingStorageEnv fi, Random rnd);
    }

    // ------------------------------------------------------------------ log faults during commits

    @Test
    void failedLogWrite() throws Exception {
        rounds("failed log write", Durability.SYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.failWrite(1 + rnd.nextInt(8));
        });
    }

    @Test
    void failedLogWriteUnderAsync() throws Exception {
        rounds("failed log write (ASYNC)", Durability.ASYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.failWrite(1 + rnd.nextInt(8));
        });
    }

    @Test
    void failedLogSync() throws Exception {
        rounds("failed log fsync", Durability.SYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.failSync(1 + rnd.nextInt(8));
        });
    }

    @Test
    void everyLogSyncFails() throws Exception {
        rounds("every log fsync fails", Durability.SYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.failAllSyncs(true);
        });
    }

    @Test
    void diskFull() throws Exception {
        rounds("disk full", Durability.SYNC, (fi, rnd) -> fi.setSpaceBudget(rnd.nextInt(256 << 10)));
    }

    @Test
    void tornLogWrite() throws Exception {
        rounds("torn log write", Durability.SYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.tearWrite(1 + rnd.nextInt(8), rnd.nextInt(300));
        });
    }

    @Test
    void everyLogWriteFailsAfterSomeMore() throws Exception {
        rounds("log writes fail after a few more", Durability.SYNC, (fi, rnd) -> {
            fi.onlyFiles(LOG_FILES);
            fi.failWritesAfter(rnd.nextInt(40));
        });
    }

    private void rounds(String name, Durability durability, Fault fault) throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "FaultInjectionTest %s: seed %d%n", name, seed);
        Random seeds = new Random(seed);
        List<String> notes = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve(name.replaceAll("[^a-zA-Z]+", "-") + "-" + round);
            String context = name + ", round " + round + " (-Dbetree.seed=" + seed + ", round seed " + roundSeed + ")";
            try {
                assertTimeoutPreemptively(ROUND_LIMIT, () -> {
                    notes.add(commitFaultRound(dir, durability, roundSeed, fault));
                },
                        () -> context + ": did not finish in " + ROUND_LIMIT + " (a hang?)");
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        notes.forEach(n -> System.out.println("  " + name + ": " + n));
    }

    /** A session on one directory: the workload, the model and what was acknowledged. */
    private static final class Session {
        final Path dir;
        final Durability durability;
        final Random rnd;
        final AccountsWorkload w;
        final AccountsWorkload.Model empty;
        final FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        Environment env;
        AccountsWorkload.Indexes ix;
        /** Commits the live environment holds. */
        volatile long live;
        /** Last commit whose commit() returned. */
        volatile long acked;
        /** Highest seq attempted. */
        volatile long attempted;
        /** Commits known to be durable whatever the durability mode (a checkpoint returned after them). */
        volatile long floor;
        /** False once the live state is unknown (a read failed), so no more commits are attempted. */
        volatile boolean liveKnown = true;
        final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());

        Session(Path dir, Durability durability, long seed, boolean bigRows) {
            this.dir = dir;
            this.durability = durability;
            this.rnd = new Random(seed);
            this.w = new AccountsWorkload(seed, 200, 20, bigRows ? 30_000 : 600);
            this.empty = w.emptyModel();
        }

        void open(Duration checkpointInterval) {
            EnvironmentOptions options = AccountsWorkload.options().durability(durability).storage(fi)
                    .checkpointInterval(checkpointInterval).syncInterval(Duration.ofMillis(10));
            env = Environment.open(dir, options);
            ix = AccountsWorkload.open(env);
            live = AccountsWorkload.lastSeq(env, ix);
            acked = live;
            attempted = live;
            floor = live;
        }

        /** Commits the next transaction; on failure checks the exception and settles the live state. */
        boolean tryCommit() {
            long seq = live + 1;
            attempted = Math.max(attempted, seq);
            try {
                w.commit(env, ix, seq);
            } catch (Throwable t) {
                checkFailure("commit " + seq, t);
                settleLive(seq);
                return false;
            }
            live = seq;
            acked = seq;
            return true;
        }

        boolean tryCheckpoint() {
            try {
                env.checkpoint();
            } catch (Throwable t) {
                checkFailure("checkpoint", t);
                return false;
            }
            floor = Math.max(floor, live);
            return true;
        }

        void checkFailure(String what, Throwable t) {
            if (!(t instanceof BetreeException) || t instanceof WriteConflictException) {
                throw new AssertionError(what + " failed with " + t + " instead of a BetreeException", t);
            }
            events.add(what + " failed: " + t.getMessage());
        }

        /** After commit {@code seq} failed: the live state is the one before it or, at most, after it. */
        void settleLive(long seq) {
            AccountsWorkload.Stored s;
            try {
                s = w.read(env, ix);
            } catch (BetreeException e) {
                liveKnown = false;
                events.add("reading after the failure failed too: " + e);
                return;
            }
            if (s.last == seq) {
                events.add("commit " + seq + " threw but is visible to new transactions");
            } else if (s.last != seq - 1) {
                throw new AssertionError("after commit " + seq + " failed the live data ends at commit " + s.last);
            }
            AccountsWorkload.Model m = empty.advancedTo(s.last);
            String diff = m.differences(s);
            if (diff != null) {
                throw new AssertionError("after commit " + seq + " failed the live data is not a committed state: "
                        + diff);
            }
            live = s.last;
        }

        /** Power cut, then close the dead environment (must not hang; may throw). */
        void crash(boolean random) throws Exception {
            if (random) {
                fi.crash(rnd);
            } else {
                fi.crash();
            }
            try {
                env.close();
                events.add("close after the crash returned normally");
            } catch (BetreeException | IllegalStateException e) {
                // Expected: the files died under it.
            } catch (Throwable t) {
                throw new AssertionError("close after a crash threw " + t, t);
            }
            env = null;
        }

        /**
         * Reopens with a fault-free env, checks the recovered state is a prefix in the allowed range,
         * then checks new commits are logged and recovered, across a clean close.
         */
        AccountsWorkload.Model reopenAndVerify(String context) {
            long lo = durability == Durability.SYNC ? acked : floor;
            AccountsWorkload.Model m;
            EnvironmentOptions clean = AccountsWorkload.options().checkpointInterval(Duration.ZERO);
            try (Environment e = Environment.open(dir, clean)) {
                AccountsWorkload.Indexes x = AccountsWorkload.open(e);
                m = w.expectPrefix(e, x, empty, lo, attempted, context + " after the crash");
                for (long seq = m.commits + 1; seq <= m.commits + 10; seq++) {
                    w.commit(e, x, seq);
                }
            }
            try (Environment e = Environment.open(dir, clean)) {
                AccountsWorkload.Indexes x = AccountsWorkload.open(e);
                w.expectPrefix(e, x, m, m.commits + 10, m.commits + 10, context + " after 10 more commits and a reopen");
            }
            // And once more after a crash that loses nothing synced: recovery of a recovered log.
            FaultInjectingStorageEnv again = new FaultInjectingStorageEnv();
            Environment e = Environment.open(dir, clean.storage(again));
            AccountsWorkload.Indexes x = AccountsWorkload.open(e);
            for (long seq = m.commits + 11; seq <= m.commits + 20; seq++) {
                w.commit(e, x, seq);
            }
            try {
                again.crash();
            } catch (java.io.IOException ex) {
                throw new AssertionError(ex);
            }
            try {
                e.close();
            } catch (BetreeException | IllegalStateException ignored) {
                // The files died under it.
            }
            try (Environment e2 = Environment.open(dir, clean)) {
                AccountsWorkload.Indexes x2 = AccountsWorkload.open(e2);
                w.expectPrefix(e2, x2, m, m.commits + 20, m.commits + 20, context + " after a second crash");
            }
            return m;
        }
    }

    private String commitFaultRound(Path dir, Durability durability, long seed, Fault fault) throws Exception {
        Random rnd = new Random(seed);
        Session s = new Session(dir, durability, seed, rnd.nextInt(3) == 0);
        s.open(Duration.ZERO);
        int warmUp = 10 + rnd.nextInt(60);
        for (int i = 0; i < warmUp; i++) {
            if (!s.tryCommit()) {
                throw new AssertionError("commit failed before any fault was armed: " + s.events);
            }
            if (rnd.nextInt(30) == 0 && !s.tryCheckpoint()) {
                throw new AssertionError("checkpoint failed before any fault was armed: " + s.events);
            }
        }
        if (!s.tryCheckpoint()) {
            throw new AssertionError("checkpoint failed before any fault was armed: " + s.events);
        }
        int beforeFault = rnd.nextInt(20);
        for (int i = 0; i < beforeFault; i++) {
            if (!s.tryCommit()) {
                throw new AssertionError("commit failed before any fault was armed: " + s.events);
            }
        }
        fault.arm(s.fi, rnd);
        int attempts = 0;
        while (s.tryCommit()) {
            if (++attempts > 3000) {
                throw new AssertionError("the fault never fired in 3000 commits");
            }
        }
        long ackedAtFault = s.acked;
        s.fi.clearFaults();
        // The environment may refuse everything from now on, or carry on; what it acknowledges counts.
        int later = 0;
        for (int i = 0; i < 5 && s.liveKnown; i++) {
            if (s.tryCommit()) {
                later++;
            }
        }
        boolean checkpointed = rnd.nextBoolean() && s.liveKnown && s.tryCheckpoint();
        s.crash(rnd.nextBoolean());
        AccountsWorkload.Model m = s.reopenAndVerify("seed " + seed);
        return String.format(Locale.ROOT,
                "fault after commit %d; %d later commits acknowledged; %s; recovered to commit %d of [%d, %d]; %s",
                ackedAtFault, later, checkpointed ? "checkpointed after the fault" : "no checkpoint after the fault",
                m.commits, s.durability == Durability.SYNC ? s.acked : s.floor, s.attempted, s.events);
    }

    // ------------------------------------------------------------------ crash without a fault

    @Test
    void crashLosesOnlyUnsyncedDataUnderSync() throws Exception {
        crashRounds(Durability.SYNC);
    }

    @Test
    void crashKeepsACommittedPrefixUnderAsync() throws Exception {
        crashRounds(Durability.ASYNC);
    }

    @Test
    void crashKeepsACommittedPrefixUnderNone() throws Exception {
        crashRounds(Durability.NONE);
    }

    /**
     * A committer thread runs while background checkpoints come every 30-130 ms; the power is cut
     * at a random moment (unsynced writes surviving whole, torn or not at all).
     */
    private void crashRounds(Durability durability) throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "FaultInjectionTest crash under %s: seed %d%n", durability, seed);
        Random seeds = new Random(seed);
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve("crash-" + durability + "-" + round);
            String context = "crash under " + durability + ", round " + round + " (-Dbetree.seed=" + seed
                    + ", round seed " + roundSeed + ")";
            try {
                String note = assertTimeoutPreemptively(ROUND_LIMIT, () -> crashRound(dir, durability, roundSeed),
                        () -> context + ": did not finish in " + ROUND_LIMIT + " (a hang?)");
                System.out.println("  " + context + ": " + note);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
    }

    private String crashRound(Path dir, Durability durability, long seed) throws Exception {
        Random rnd = new Random(seed);
        Session s = new Session(dir, durability, seed, rnd.nextInt(4) == 0);
        s.open(Duration.ofMillis(30 + rnd.nextInt(100)));
        for (int i = 0; i < 20; i++) {
            s.tryCommit();
        }
        if (!s.tryCheckpoint()) {
            throw new AssertionError("checkpoint failed before the crash: " + s.events);
        }
        AtomicReference<Throwable> committerFailure = new AtomicReference<>();
        Thread committer = new Thread(() -> {
            try {
                while (s.liveKnown && s.tryCommit()) {
                    // Until the crash kills the files.
                }
            } catch (Throwable t) {
                committerFailure.set(t);
            }
        }, "committer");
        committer.start();
        Thread.sleep(20 + rnd.nextInt(400));
        boolean random = rnd.nextInt(4) != 0;
        if (random) {
            s.fi.crash(rnd);
        } else {
            s.fi.crash();
        }
        committer.join(30_000);
        if (committer.isAlive()) {
            throw new AssertionError("the committer hangs after the crash");
        }
        if (committerFailure.get() != null) {
            throw new AssertionError("committer: " + committerFailure.get(), committerFailure.get());
        }
        try {
            s.env.close();
        } catch (BetreeException | IllegalStateException expected) {
            // The files died under it.
        }
        AccountsWorkload.Model m = s.reopenAndVerify("seed " + seed);
        return String.format(Locale.ROOT, "%s crash after %d acknowledged commits; recovered to commit %d (floor %d)",
                random ? "random" : "clean", s.acked, m.commits, durability == Durability.SYNC ? s.acked : s.floor);
    }

    // ------------------------------------------------------------------ faults during checkpoints

    @Test
    void failedDataFileWriteDuringCheckpoint() throws Exception {
        checkpointRounds("failed data-file write in a checkpoint", (fi, rnd) -> {
            fi.onlyFiles(DATA_FILE);
            fi.failWrite(1 + rnd.nextInt(6));
        });
    }

    @Test
    void failedDataFileSyncDuringCheckpoint() throws Exception {
        checkpointRounds("failed data-file fsync in a checkpoint", (fi, rnd) -> {
            fi.onlyFiles(DATA_FILE);
            fi.failSync(1 + rnd.nextInt(2));
        });
    }

    @Test
    void tornDataFileWriteDuringCheckpoint() throws Exception {
        checkpointRounds("torn data-file write in a checkpoint", (fi, rnd) -> {
            fi.onlyFiles(DATA_FILE);
            fi.tearWrite(1 + rnd.nextInt(6), rnd.nextInt(8192));
        });
    }

    @Test
    void dataFileFullDuringCheckpoint() throws Exception {
        checkpointRounds("disk full in a checkpoint", (fi, rnd) -> {
            fi.onlyFiles(DATA_FILE);
            fi.setSpaceBudget(rnd.nextInt(128 << 10));
        });
    }

    private void checkpointRounds(String name, Fault fault) throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "FaultInjectionTest %s: seed %d%n", name, seed);
        Random seeds = new Random(seed);
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve(name.replaceAll("[^a-zA-Z]+", "-") + "-" + round);
            String context = name + ", round " + round + " (-Dbetree.seed=" + seed + ", round seed " + roundSeed + ")";
            try {
                String note = assertTimeoutPreemptively(ROUND_LIMIT, () -> checkpointRound(dir, roundSeed, fault),
                        () -> context + ": did not finish in " + ROUND_LIMIT + " (a hang?)");
                System.out.println("  " + context + ": " + note);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * Commits go on in another thread while a checkpoint fails; commits must be unaffected, and after
     * a crash (with or without a later successful checkpoint) every acknowledged commit is recovered.
     */
    private String checkpointRound(Path dir, long seed, Fault fault) throws Exception {
        Random rnd = new Random(seed);
        Session s = new Session(dir, Durability.SYNC, seed, rnd.nextInt(3) == 0);
        s.open(Duration.ZERO);
        for (int i = 0; i < 100 + rnd.nextInt(200); i++) {
            if (!s.tryCommit()) {
                throw new AssertionError("commit failed before any fault was armed: " + s.events);
            }
        }
        if (!s.tryCheckpoint()) {
            throw new AssertionError("checkpoint failed before any fault was armed: " + s.events);
        }
        for (int i = 0; i < 50 + rnd.nextInt(100); i++) {
            s.tryCommit();
        }
        AtomicReference<Throwable> committerFailure = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread committer = new Thread(() -> {
            try {
                while (!stop.get()) {
                    if (!s.tryCommit()) {
                        committerFailure.set(new AssertionError("a commit failed while a checkpoint failed: "
                                + s.events));
                        return;
                    }
                }
            } catch (Throwable t) {
                committerFailure.set(t);
            }
        }, "committer");
        committer.start();
        int tries = 0;
        boolean failed = false;
        while (!failed && tries++ < 20) {
            Thread.sleep(rnd.nextInt(30));
            fault.arm(s.fi, rnd);
            try {
                s.env.checkpoint();
            } catch (Throwable t) {
                s.checkFailure("checkpoint", t);
                failed = true;
            }
            s.fi.clearFaults();
        }
        Thread.sleep(50 + rnd.nextInt(100));
        stop.set(true);
        committer.join(30_000);
        if (committer.isAlive()) {
            throw new AssertionError("the committer hangs");
        }
        if (committerFailure.get() != null) {
            throw new AssertionError("committer: " + committerFailure.get(), committerFailure.get());
        }
        if (!failed) {
            throw new AssertionError("the checkpoint fault never fired in 20 checkpoints");
        }
        // The live environment still holds every commit.
        String diff = s.empty.advancedTo(s.live).differences(s.w.read(s.env, s.ix));
        if (diff != null) {
            throw new AssertionError("after the failed checkpoint the live data differs: " + diff);
        }
        boolean checkpointAgain = rnd.nextBoolean();
        if (checkpointAgain && !s.tryCheckpoint()) {
            throw new AssertionError("a checkpoint after the fault was cleared failed: " + s.events);
        }
        int more = rnd.nextInt(20);
        for (int i = 0; i < more; i++) {
            if (!s.tryCommit()) {
                throw new AssertionError("a commit after the fault was cleared failed: " + s.events);
            }
        }
        s.crash(rnd.nextBoolean());
        AccountsWorkload.Model m = s.reopenAndVerify("seed " + seed);
        if (m.commits != s.acked) {
            throw new AssertionError("recovered to commit " + m.commits + " but " + s.acked + " were acknowledged");
        }
        return String.format(Locale.ROOT, "checkpoint failed after %d tries; %s; recovered all %d commits; %s", tries,
                checkpointAgain ? "a later checkpoint succeeded" : "no later checkpoint", m.commits, s.events);
    }
}
