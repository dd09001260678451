package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.StorageSeam;
import io.betree.Transaction;
import io.betree.WriteConflictException;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
    /** Checkpoints tried per round before a fault that never fired fails the round. */
    private static final int CHECKPOINT_TRIES = 50;
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
        List<AssertionError> wrongTypes = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve(name.replaceAll("[^a-zA-Z]+", "-") + "-" + round);
            String context = name + ", round " + round + " (-Dbetree.seed=" + seed + ", round seed " + roundSeed + ")";
            try {
                assertTimeoutPreemptively(ROUND_LIMIT, () -> {
                    notes.add(commitFaultRound(dir, durability, roundSeed, fault));
                },
                        () -> hangReport(context));
            } catch (WrongExceptionType e) {
                // Recovery was still checked; the remaining rounds run, the test fails at the end.
                wrongTypes.add(new AssertionError(context + ": " + e.getMessage(), e.getCause()));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        notes.forEach(n -> System.out.println("  " + name + ": " + n));
        failOnWrongTypes(wrongTypes);
    }

    /** A session on one directory: the workload, the model and what was acknowledged. */
    private static final class Session {
        final Path dir;
        final Durability durability;
        final Random rnd;
        final AccountsWorkload w;
        final AccountsWorkload.Model empty;
        final FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        /** What the environment uses: {@link #fi}, fenced off at the crash (see {@link FencedStorageEnv}). */
        final FencedStorageEnv fenced = new FencedStorageEnv(fi);
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
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        /** Exceptions of the wrong type, reported after the round (so that recovery is checked too). */
        final List<AssertionError> violations = Collections.synchronizedList(new ArrayList<>());

        Session(Path dir, Durability durability, long seed, boolean bigRows) {
            this.dir = dir;
            this.durability = durability;
            this.rnd = new Random(seed);
            this.w = new AccountsWorkload(seed, 200, 20, bigRows ? 30_000 : 600);
            this.empty = w.emptyModel();
        }

        void open(Duration checkpointInterval) {
            EnvironmentOptions options = StorageSeam.withStorage(AccountsWorkload.options().durability(durability)
                    .checkpointInterval(checkpointInterval).syncInterval(Duration.ofMillis(10)), fenced);
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

        /**
         * A failure must be a {@link BetreeException} (not a write conflict: one thread commits); any
         * other type is recorded as a violation, reported when the round has finished.
         */
        void checkFailure(String what, Throwable t) {
            if (t instanceof Error && !(t instanceof AssertionError)) {
                throw (Error) t;
            }
            if (t instanceof AssertionError) {
                throw (AssertionError) t;
            }
            if (!(t instanceof BetreeException) || t instanceof WriteConflictException) {
                violations.add(new AssertionError(what + " threw " + t + " instead of a BetreeException", t));
            }
            event(what + " failed: " + t);
        }

        /** Records an event once (without directory names, and shortened) for the round's summary. */
        void event(String e) {
            String shortened = e.replace(dir.toString(), "<dir>");
            if (shortened.length() > 240) {
                shortened = shortened.substring(0, 240) + "...";
            }
            String stem = shortened.replaceAll("\\d+", "#");
            synchronized (events) {
                if (events.stream().noneMatch(x -> x.replaceAll("\\d+", "#").equals(stem)) && events.size() < 6) {
                    events.add(shortened);
                }
            }
        }

        /** After commit {@code seq} failed: the live state is the one before it or, at most, after it. */
        void settleLive(long seq) {
            AccountsWorkload.Stored s;
            try {
                s = w.read(env, ix);
            } catch (BetreeException e) {
                liveKnown = false;
                event("reading after the failure failed too: " + e);
                return;
            }
            if (s.last == seq) {
                event("commit " + seq + " threw but is visible to new transactions");
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
            crashFiles(random);
            closeDead();
        }

        /** The power cut: the crashed environment can no longer touch the files, which lose what was unsynced. */
        void crashFiles(boolean random) throws Exception {
            fenced.fenceAndThen(() -> {
                if (random) {
                    fi.crash(rnd);
                } else {
                    fi.crash();
                }
            });
        }

        /** Closes the environment whose files died in a crash: may throw a BetreeException, nothing else. */
        void closeDead() {
            try {
                env.close();
                event("close after the crash returned normally");
            } catch (BetreeException | IllegalStateException e) {
                // Expected: the files died under it.
            } catch (Throwable t) {
                if (t instanceof Error) {
                    throw (Error) t;
                }
                violations.add(new AssertionError("close after a crash threw " + t + " instead of a BetreeException", t));
            }
            env = null;
        }

        /** Fails with the first violation recorded in the round. */
        void reportViolations() {
            if (!violations.isEmpty()) {
                AssertionError first = violations.get(0);
                throw new WrongExceptionType(violations.size() + " exception(s) of the wrong type; first: "
                        + first.getMessage(), first.getCause());
            }
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
            FencedStorageEnv againFenced = new FencedStorageEnv(again);
            Environment e = Environment.open(dir, StorageSeam.withStorage(clean, againFenced));
            AccountsWorkload.Indexes x = AccountsWorkload.open(e);
            for (long seq = m.commits + 11; seq <= m.commits + 20; seq++) {
                w.commit(e, x, seq);
            }
            try {
                againFenced.fenceAndThen(again::crash);
            } catch (IOException ex) {
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
        s.reportViolations();
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
        List<AssertionError> wrongTypes = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve("crash-" + durability + "-" + round);
            String context = "crash under " + durability + ", round " + round + " (-Dbetree.seed=" + seed
                    + ", round seed " + roundSeed + ")";
            try {
                String note = assertTimeoutPreemptively(ROUND_LIMIT, () -> crashRound(dir, durability, roundSeed),
                        () -> hangReport(context));
                System.out.println("  " + context + ": " + note);
            } catch (WrongExceptionType e) {
                // Recovery was still checked; the remaining rounds run, the test fails at the end.
                wrongTypes.add(new AssertionError(context + ": " + e.getMessage(), e.getCause()));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        failOnWrongTypes(wrongTypes);
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
        // The crashed environment's threads live on (a real power cut would have killed them); the
        // fence keeps them off the files, and the committer stops once the crash began.
        AtomicBoolean crashing = new AtomicBoolean();
        Thread committer = new Thread(() -> {
            try {
                while (!crashing.get() && s.liveKnown && s.tryCommit()) {
                    // Until the crash kills the files.
                }
            } catch (Throwable t) {
                committerFailure.set(t);
            }
        }, "committer");
        committer.start();
        Thread.sleep(20 + rnd.nextInt(400));
        boolean random = rnd.nextInt(4) != 0;
        crashing.set(true);
        s.crashFiles(random);
        committer.join(30_000);
        if (committer.isAlive()) {
            throw new AssertionError("the committer hangs after the crash (" + (random ? "random" : "clean")
                    + " crash after " + s.acked + " acknowledged commits)\n" + threadDump());
        }
        if (committerFailure.get() != null) {
            throw new AssertionError("committer: " + committerFailure.get(), committerFailure.get());
        }
        String afterCrash = listing(dir);
        s.closeDead();
        String afterClose = listing(dir);
        AccountsWorkload.Model m;
        try {
            m = s.reopenAndVerify("seed " + seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(e.getMessage() + "\nfiles after the crash: " + afterCrash
                    + "\nfiles after closing the crashed environment: " + afterClose + "\nevents: " + s.events
                    + "\nevidence kept in " + keepEvidence(dir), e);
        }
        s.reportViolations();
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
        List<AssertionError> wrongTypes = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            long roundSeed = seeds.nextLong();
            Path dir = work.resolve(name.replaceAll("[^a-zA-Z]+", "-") + "-" + round);
            String context = name + ", round " + round + " (-Dbetree.seed=" + seed + ", round seed " + roundSeed + ")";
            try {
                String note = assertTimeoutPreemptively(ROUND_LIMIT, () -> checkpointRound(dir, roundSeed, fault),
                        () -> hangReport(context));
                System.out.println("  " + context + ": " + note);
            } catch (WrongExceptionType e) {
                // Recovery was still checked; the remaining rounds run, the test fails at the end.
                wrongTypes.add(new AssertionError(context + ": " + e.getMessage(), e.getCause()));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        failOnWrongTypes(wrongTypes);
    }

    /**
     * Commits go on in another thread while a checkpoint fails. A failed checkpoint makes the
     * environment refuse further work (fail-stop, documented on {@code Environment.checkpoint()}),
     * so the committer's later commits fail with a {@link BetreeException}; after a crash every
     * acknowledged commit is recovered from the log.
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
        AtomicBoolean stop = new AtomicBoolean();
        Thread committer = new Thread(() -> {
            try {
                while (!stop.get()) {
                    if (!s.tryCommit()) {
                        return; // refused after the failed checkpoint (checkFailure vetted the type)
                    }
                }
            } catch (Throwable t) {
                committerFailure.set(t);
            }
        }, "committer");
        committer.start();
        int tries = 0;
        boolean failed = false;
        while (!failed && tries++ < CHECKPOINT_TRIES) {
            Thread.sleep(rnd.nextInt(30));
            // A fault fires only if the checkpoint writes (disk full: only if it grows the file, not
            // when it fits in freed space), so each try waits for the committer to dirty nodes
            // rather than trusting it to be scheduled on a loaded machine.
            long wanted = s.acked + 5 + rnd.nextInt(20);
            while (s.acked < wanted && committer.isAlive()) {
                Thread.sleep(1);
            }
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
            throw new AssertionError("the committer hangs\n" + threadDump());
        }
        if (committerFailure.get() != null) {
            throw new AssertionError("committer: " + committerFailure.get(), committerFailure.get());
        }
        if (!failed) {
            throw new AssertionError("the checkpoint fault never fired in " + CHECKPOINT_TRIES + " checkpoints");
        }
        // Fail-stop: after the failed checkpoint the environment refuses commits and checkpoints.
        if (s.tryCommit()) {
            throw new AssertionError("a commit after a failed checkpoint was accepted: " + s.events);
        }
        if (s.tryCheckpoint()) {
            throw new AssertionError("a checkpoint after a failed checkpoint was accepted: " + s.events);
        }
        boolean checkpointAgain = false;
        s.crash(rnd.nextBoolean());
        AccountsWorkload.Model m = s.reopenAndVerify("seed " + seed);
        s.reportViolations();
        if (m.commits != s.acked) {
            throw new AssertionError("recovered to commit " + m.commits + " but " + s.acked + " were acknowledged");
        }
        return String.format(Locale.ROOT, "checkpoint failed after %d tries; %s; recovered all %d commits; %s", tries,
                checkpointAgain ? "a later checkpoint succeeded" : "no later checkpoint (or it failed)", m.commits,
                s.events);
    }

    // ------------------------------------------------------------------ focused contract checks

    private static EnvironmentOptions faulty(StorageEnv storage) {
        return StorageSeam.withStorage(AccountsWorkload.options().checkpointInterval(Duration.ZERO), storage);
    }

    /**
     * A commit whose log sync failed has an unknown outcome (documented on
     * {@link Transaction#commit()}): the environment refuses every further read and write until it
     * is reopened, and after reopening the commit is wholly present or wholly absent.
     */
    @Test
    void afterAFailedLogSyncTheEnvironmentRefusesWorkUntilReopened() throws Exception {
        FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        byte[] k = {1};
        Path d = work.resolve("sync-visible");
        try (Environment env = Environment.open(d, faulty(fi))) {
            Index idx = env.openIndex("t", AccountsWorkload.shape());
            idx.put(k, new byte[] {1});
            fi.onlyFiles(LOG_FILES);
            fi.failSync(1);
            try (Transaction txn = env.begin()) {
                idx.put(txn, k, new byte[] {2});
                assertThrows(BetreeException.class, txn::commit);
            }
            fi.clearFaults();
            assertThrows(BetreeException.class, () -> idx.get(k), "reads after a failed log sync");
            assertThrows(BetreeException.class, env::begin, "transactions after a failed log sync");
            assertThrows(BetreeException.class, () -> idx.put(k, new byte[] {3}), "writes after a failed log sync");
        }
        try (Environment env = Environment.open(d, AccountsWorkload.options())) {
            Index idx = env.openIndex("t", AccountsWorkload.shape());
            byte[] v = idx.get(k);
            assertTrue(Arrays.equals(v, new byte[] {1}) || Arrays.equals(v, new byte[] {2}),
                    "after reopening the commit is wholly there or wholly absent, was " + Arrays.toString(v));
            idx.put(k, new byte[] {4});
            assertArrayEquals(new byte[] {4}, idx.get(k), "the reopened environment commits again");
        }
    }

    /**
     * After a checkpoint failed to sync the data file, the data file refuses checkpoints until the
     * environment is reopened; later {@code checkpoint()} and {@code close()} calls must still report
     * that as a {@link BetreeException} (the documented {@code BetreeIOException}), not as a
     * {@link java.io.UncheckedIOException}.
     */
    @Test
    void checkpointAndCloseAfterAFailedDataFileSyncThrowBetreeExceptions() throws Exception {
        FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        Path d = work.resolve("refusing-data-file");
        Environment env = Environment.open(d, faulty(fi));
        Index idx = env.openIndex("t", AccountsWorkload.shape());
        idx.put(new byte[] {1}, new byte[] {1});
        fi.onlyFiles(DATA_FILE);
        fi.failSync(1);
        assertThrows(BetreeException.class, env::checkpoint, "the failing checkpoint");
        fi.clearFaults();
        assertThrows(BetreeException.class, () -> idx.put(new byte[] {2}, new byte[] {2}),
                "writes are refused after a failed checkpoint until the environment is reopened");
        Throwable again = assertThrows(Throwable.class, env::checkpoint,
                "checkpoints are refused until reopened");
        Throwable atClose = null;
        try {
            env.close();
        } catch (Throwable t) {
            atClose = t;
        }
        try (Environment reopened = Environment.open(d, AccountsWorkload.options())) {
            Index t = reopened.openIndex("t", AccountsWorkload.shape());
            assertArrayEquals(new byte[] {1}, t.get(new byte[] {1}),
                    "the commit before the failed checkpoint is recovered from the log");
            t.put(new byte[] {2}, new byte[] {2});
            reopened.checkpoint();
        }
        assertTrue(again instanceof BetreeException,
                "checkpoint() after a failed data-file sync threw " + again);
        assertTrue(atClose == null || atClose instanceof BetreeException,
                "close() after a failed data-file sync threw " + atClose);
    }

    /**
     * A transaction of about 4 MiB, four times the log segment size, committed whole or torn: after a
     * power cut it is either entirely there (it was acknowledged) or entirely absent (its log write
     * was torn), and the log accepts and recovers commits after it.
     */
    @Test
    void aTransactionLargerThanALogSegment() throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.println("FaultInjectionTest large transaction: seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < 4; round++) {
            boolean tear = round % 2 == 1;
            Path d = work.resolve("large-" + round);
            FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
            FencedStorageEnv fenced = new FencedStorageEnv(fi);
            Environment env = Environment.open(d, faulty(fenced));
            Index a = env.openIndex("a", AccountsWorkload.shape());
            Index b = env.openIndex("b", AccountsWorkload.shape());
            a.put(new byte[] {0}, new byte[] {0});
            byte[][] values = new byte[40][];
            boolean committed;
            try (Transaction txn = env.begin()) {
                for (int i = 0; i < values.length; i++) {
                    values[i] = new byte[100_000];
                    rnd.nextBytes(values[i]);
                    (i % 2 == 0 ? a : b).put(txn, new byte[] {1, (byte) i}, values[i]);
                }
                if (tear) {
                    fi.onlyFiles(LOG_FILES);
                    fi.tearWrite(1, rnd.nextInt(4_000_000));
                }
                try {
                    txn.commit();
                    committed = true;
                } catch (BetreeException e) {
                    committed = false;
                }
            }
            assertEquals(!tear, committed, "round " + round + ": commit outcome");
            fenced.fenceAndThen(() -> fi.crash(rnd));
            try {
                env.close();
            } catch (RuntimeException ignored) {
                // The files died under it.
            }
            for (int reopen = 0; reopen < 2; reopen++) {
                try (Environment e = Environment.open(d, AccountsWorkload.options())) {
                    Index ra = e.openIndex("a", AccountsWorkload.shape());
                    Index rb = e.openIndex("b", AccountsWorkload.shape());
                    assertArrayEquals(new byte[] {0}, ra.get(new byte[] {0}));
                    int present = 0;
                    for (int i = 0; i < values.length; i++) {
                        byte[] v = (i % 2 == 0 ? ra : rb).get(new byte[] {1, (byte) i});
                        if (v != null) {
                            assertArrayEquals(values[i], v);
                            present++;
                        }
                    }
                    assertEquals(committed ? values.length : 0, present,
                            "round " + round + " (-Dbetree.seed=" + seed + "), reopen " + reopen
                                    + ": rows of the large transaction after the crash (all or nothing)");
                    if (reopen == 0) {
                        ra.put(new byte[] {2}, new byte[] {2});
                    } else {
                        assertArrayEquals(new byte[] {2}, ra.get(new byte[] {2}),
                                "a commit after recovery");
                    }
                }
            }
        }
    }

    /** The failure message of a round that did not finish in {@link #ROUND_LIMIT}, with the stacks. */
    private static String hangReport(String context) {
        return context + ": did not finish in " + ROUND_LIMIT + " (a hang?)\n" + threadDump();
    }

    /**
     * Stacks of the round's threads (the committer, JUnit's timeout thread running the round) and
     * the engine's, for a hang's diagnosis. A preemptive timeout asks for its message before it
     * interrupts the round, so the stacks are those of the hang.
     */
    static String threadDump() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            String name = e.getKey().getName();
            if (!name.startsWith("committer") && !name.startsWith("betree") && !name.startsWith("junit")) {
                continue;
            }
            sb.append('"').append(name).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                sb.append("    at ").append(f).append('\n');
            }
        }
        return sb.toString();
    }

    /** The files of {@code dir} with their sizes. */
    static String listing(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.sorted().map(p -> {
                try {
                    return p.getFileName() + "=" + Files.size(p);
                } catch (IOException e) {
                    return p.getFileName() + "=?";
                }
            }).collect(Collectors.joining(", "));
        } catch (IOException e) {
            return "(unlisted: " + e + ")";
        }
    }

    /** Copies a failed round's directory to {@code target/fault-evidence} (the temp dir is deleted). */
    static Path keepEvidence(Path dir) {
        Path to = Path.of("target", "fault-evidence", dir.getFileName() + "-" + System.nanoTime()).toAbsolutePath();
        try {
            Files.createDirectories(to);
            try (Stream<Path> files = Files.list(dir)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    Files.copy(p, to.resolve(p.getFileName()));
                }
            }
        } catch (IOException e) {
            return Path.of("(not kept: " + e + ")");
        }
        return to;
    }

    /** A failure reported with an exception type the API does not document; recovery was still checked. */
    static final class WrongExceptionType extends AssertionError {
        private static final long serialVersionUID = 1L;

        WrongExceptionType(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static void failOnWrongTypes(List<AssertionError> wrongTypes) {
        if (!wrongTypes.isEmpty()) {
            AssertionError first = wrongTypes.get(0);
            throw new AssertionError("in " + wrongTypes.size() + " of " + ROUNDS + " rounds (whose recovery was "
                    + "correct) a call threw an exception of an undocumented type; first: " + first.getMessage(),
                    first.getCause());
        }
    }
}
