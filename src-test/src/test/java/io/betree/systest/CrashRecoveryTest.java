package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.TreeChecks;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM running {@link CrashWorkload} with SIGKILL at random moments, again and again on
 * the same directory, and checks after each kill, in this JVM, that the directory holds exactly the
 * state after some number {@code k} of the workload's transactions (no transaction partly visible,
 * every {@code by_owner} entry matching its primary row and vice versa) and, under
 * {@link Durability#SYNC}, that {@code k} is the last acknowledged commit or the one after it (which
 * may have committed without being acknowledged); {@link Durability#NONE} promises the same for a
 * process crash. Under {@link Durability#ASYNC} only prefix consistency is required. Some cycles kill the child during its start-up (while it recovers), and
 * some are not verified in between, so that a child recovers what the previous child left.
 *
 * <p>The concurrent scenarios do the same with {@link ConcurrentCrashWorkload}: four
 * writer threads commit at once, each in a key range of its own and on a few counters they share
 * (so that they conflict, and the loser retries), every commit writing three or four indexes, while
 * checkpoints run. A single writer cannot show what they look for: commits that overlap in the
 * commit pipeline (group commit, apply turns, the visibility watermark, checkpoints taken between
 * them) and recovery of a log in which they interleave. After each verified kill
 * {@link ConcurrentWritersWorkload#verify} checks that every commit is there in all its indexes or in
 * none, that each writer's commits survived without a gap, that no commit survived without the
 * commits its snapshot saw, that each writer's last surviving commit is its last acknowledged one
 * or the one after it (under {@link Durability#ASYNC}: not before what the previous start
 * recovered), and the trees' invariants ({@link TreeChecks}). They run fewer cycles than the
 * single-writer scenarios (a cycle costs as much, and those already cover the kill timings).
 *
 * <p>Reproduce the workload with {@code -Dbetree.seed=N} (kill timing is wall-clock dependent);
 * {@code -Dbetree.crashCycles=N} sets the number of kill cycles (default 30 for SYNC, half as many
 * for ASYNC, a quarter for NONE), {@code -Dbetree.concurrentCrashCycles=N} those of the concurrent
 * scenarios (default 10 for SYNC, half as many for ASYNC, a third for NONE).
 */
class CrashRecoveryTest {
    private static final int CYCLES = Integer.getInteger("betree.crashCycles", 30);
    private static final int IDS = 300;
    private static final int OWNERS = 25;
    private static final int MAX_PAYLOAD = 400;
    private static final int CONCURRENT_CYCLES = Integer.getInteger("betree.concurrentCrashCycles", 10);
    private static final int WRITERS = 4;
    private static final int SLOTS_PER_WRITER = 64;
    /** Few, so that the writers conflict: a few percent of the commits under SYNC, more without syncs. */
    private static final int COUNTERS = 3;
    private static final int CONCURRENT_MAX_PAYLOAD = 300;

    @TempDir
    Path work;

    @Test
    void syncCommitsSurviveSigkill() throws Exception {
        run(Durability.SYNC, CYCLES);
    }

    @Test
    void asyncCrashesRecoverToACommittedPrefix() throws Exception {
        run(Durability.ASYNC, Math.max(10, CYCLES / 2));
    }

    /**
     * {@link Durability#NONE} promises that "a crash of the process loses nothing the operating
     * system received": a SIGKILL (the machine stays up) must keep every acknowledged commit.
     */
    @Test
    void noneLosesNoAcknowledgedCommitOnAProcessKill() throws Exception {
        run(Durability.NONE, Math.max(8, CYCLES / 4));
    }

    @Test
    void concurrentSyncCommitsSurviveSigkill() throws Exception {
        runConcurrent(Durability.SYNC, CONCURRENT_CYCLES);
    }

    @Test
    void concurrentAsyncCrashesRecoverToACommittedPrefix() throws Exception {
        runConcurrent(Durability.ASYNC, Math.max(4, CONCURRENT_CYCLES / 2));
    }

    @Test
    void concurrentNoneLosesNoAcknowledgedCommitOnAProcessKill() throws Exception {
        runConcurrent(Durability.NONE, Math.max(3, CONCURRENT_CYCLES / 3));
    }

    private void run(Durability durability, int cycles) {
        seeded(durability.name(), cycles, seed -> runCycles(durability, cycles, seed));
    }

    private void runConcurrent(Durability durability, int cycles) {
        seeded(durability + " with " + WRITERS + " writers", cycles,
                seed -> runConcurrentCycles(durability, cycles, seed));
    }

    /** A run of kill cycles, given its seed. */
    private interface SeededRun {
        void run(long seed) throws Exception;
    }

    /** Runs {@code body} with {@code -Dbetree.seed} or a fresh seed, and names the seed if it fails. */
    private static void seeded(String scenario, int cycles, SeededRun body) {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "CrashRecoveryTest %s: seed %d (-Dbetree.seed=%d), %d cycles%n", scenario,
                seed, seed, cycles);
        try {
            body.run(seed);
        } catch (AssertionError | Exception e) {
            throw new AssertionError("crash recovery under " + scenario + " failed; rerun with -Dbetree.seed=" + seed
                    + " (" + e.getMessage() + ")", e);
        }
    }

    /**
     * Kills {@code child} after a random while: when {@code early}, within 700 ms of its launch (often
     * while it recovers), else 200 to 1,500 ms after it reported START.
     */
    private static void killAfterAWhile(CrashChild child, boolean early, Random rnd) throws Exception {
        try {
            if (early) {
                Thread.sleep(rnd.nextInt(700));
            } else {
                assertTrue(child.awaitStart(60), () -> "the child did not start within 60 s\n" + child.describe());
                Thread.sleep(200 + rnd.nextInt(1300));
            }
        } finally {
            child.kill();
        }
    }

    private void runCycles(Durability durability, int cycles, long seed) throws Exception {
        Random rnd = new Random(seed);
        Path dir = work.resolve("env");
        AccountsWorkload w = new AccountsWorkload(seed, IDS, OWNERS, MAX_PAYLOAD);
        AccountsWorkload.Model verified = w.emptyModel();
        // Every state the directory may hold now is the state after k commits for a k in [lo, hi].
        long lo = 0;
        long hi = 0;
        long started = System.nanoTime();
        int earlyKills = 0;
        int verifications = 0;
        int unacknowledgedSurvivors = 0;
        long acks = 0;
        int checkpoints = 0;
        List<String> history = new ArrayList<>();
        long stdoutBehind = 0;
        for (int cycle = 0; cycle < cycles; cycle++) {
            boolean early = cycle > 0 && rnd.nextInt(5) == 0;
            Path protocol = work.resolve("child.protocol");
            CrashChild child = CrashChild.start(CrashWorkload.class, List.of(dir.toString(), durability.name(),
                    Long.toString(w.seed), Integer.toString(w.ids), Integer.toString(w.owners),
                    Integer.toString(w.maxPayload), Long.toString(rnd.nextLong()), protocol.toString()),
                    work.resolve("child.err"), protocol);
            killAfterAWhile(child, early, rnd);
            earlyKills += early ? 1 : 0;
            CrashWorkload.Report r = CrashWorkload.Report.parse(child.lines, child.cutLine);
            history.add(String.format(Locale.ROOT, "cycle %d: %s kill, START %d, last ACK %d, %d ACKs (%d on stdout), %s",
                    cycle, early ? "early" : "late", r.start, r.lastAck, r.acks, child.stdoutAcks, r.unexpected));
            stdoutBehind += r.acks - child.stdoutAcks;
            String where = "cycle " + cycle + " (" + durability + ")\nhistory:\n  " + String.join("\n  ", history)
                    + "\n";
            String described = "child: START " + r.start + ", last ACK " + r.lastAck + ", other lines " + r.unexpected
                    + ", " + child.describe();
            if (child.exitedOnItsOwn) {
                throw new AssertionError(where + ": the child died before it was killed\n" + described);
            }
            if (r.protocolError != null) {
                throw new AssertionError(where + ": " + r.protocolError + "\n" + described);
            }
            acks += r.acks;
            checkpoints += r.checkpoints;
            if (r.start > 0) {
                long recovered = r.start - 1;
                if (recovered < lo || recovered > hi) {
                    throw new AssertionError(where + ": the child recovered the state after commit " + recovered
                            + ", expected one in [" + lo + ", " + hi + "]\n" + described);
                }
                long reached = Math.max(recovered, r.lastAck);
                // A process kill loses nothing the OS received: SYNC promises the acknowledged commits
                // anyway, NONE promises them for a process crash; ASYNC only a prefix.
                lo = durability != Durability.ASYNC ? reached : recovered;
                hi = reached + 1;
            }
            boolean verify = cycle == cycles - 1 || rnd.nextInt(3) != 0;
            if (verify) {
                verifications++;
                long lastAck = r.lastAck;
                try (Environment env = Environment.open(dir, AccountsWorkload.options())) {
                    AccountsWorkload.Indexes ix = AccountsWorkload.open(env);
                    verified = w.expectPrefix(env, ix, verified, lo, hi, where);
                }
                history.add("verified: commit " + verified.commits);
                if (lastAck > 0 && verified.commits == lastAck + 1) {
                    unacknowledgedSurvivors++;
                }
                lo = verified.commits;
                hi = verified.commits;
            }
        }
        System.out.printf(Locale.ROOT,
                "CrashRecoveryTest %s: %d kill cycles (%d during start-up, %d verified) in %.1f s: %d acknowledged "
                        + "commits, %d explicit checkpoints, data ends at commit %d; %d times an unacknowledged commit "
                        + "survived; stdout missed %d ACK lines in all%n",
                durability, cycles, earlyKills, verifications, (System.nanoTime() - started) / 1e9, acks, checkpoints,
                verified.commits, unacknowledgedSurvivors, stdoutBehind);
        assertTrue(verified.commits > 0, "no transaction ever committed");
    }

    private void runConcurrentCycles(Durability durability, int cycles, long seed) throws Exception {
        Random rnd = new Random(seed);
        Path dir = work.resolve("env");
        Path protocol = work.resolve("child.protocol");
        ConcurrentWritersWorkload w = new ConcurrentWritersWorkload(seed, WRITERS, SLOTS_PER_WRITER, COUNTERS,
                CONCURRENT_MAX_PAYLOAD);
        ConcurrentWritersWorkload.Model[] verified = w.emptyModels();
        // Every state the directory may hold now has, for each writer w, its first k commits for a k in [lo[w], hi[w]].
        long[] lo = new long[WRITERS];
        long[] hi = new long[WRITERS];
        long started = System.nanoTime();
        int earlyKills = 0;
        int verifications = 0;
        int unacknowledgedSurvivors = 0;
        long acks = 0;
        long conflicts = 0;
        int checkpoints = 0;
        long stdoutBehind = 0;
        List<String> history = new ArrayList<>();
        for (int cycle = 0; cycle < cycles; cycle++) {
            boolean early = cycle > 0 && rnd.nextInt(5) == 0;
            CrashChild child = CrashChild.start(ConcurrentCrashWorkload.class, List.of(dir.toString(), durability.name(),
                    Long.toString(w.seed), Integer.toString(w.writers), Integer.toString(w.slots),
                    Integer.toString(w.counters), Integer.toString(w.maxPayload), Long.toString(rnd.nextLong()),
                    protocol.toString()), work.resolve("child.err"), protocol);
            killAfterAWhile(child, early, rnd);
            earlyKills += early ? 1 : 0;
            ConcurrentCrashWorkload.Report r = ConcurrentCrashWorkload.Report.parse(child.lines, child.cutLine, WRITERS);
            history.add(String.format(Locale.ROOT, "cycle %d: %s kill, START %s, acknowledged %s, %d ACKs (%d on "
                    + "stdout), %d conflicts, %s", cycle, early ? "early" : "late", Arrays.toString(r.recovered),
                    Arrays.toString(r.acknowledged), r.acks, child.stdoutAcks, r.conflicts, r.unexpected));
            stdoutBehind += r.acks - child.stdoutAcks;
            String where = "cycle " + cycle + " (" + durability + ", " + WRITERS + " writers)\nhistory:\n  "
                    + String.join("\n  ", history) + "\n";
            if (child.exitedOnItsOwn) {
                throw new AssertionError(where + ": the child died before it was killed\n" + child.describe());
            }
            if (r.protocolError != null) {
                throw new AssertionError(where + ": " + r.protocolError + "\n" + child.describe());
            }
            acks += r.acks;
            conflicts += r.conflicts;
            checkpoints += r.checkpoints;
            if (r.recovered != null) {
                for (int i = 0; i < WRITERS; i++) {
                    if (r.recovered[i] < lo[i] || r.recovered[i] > hi[i]) {
                        throw new AssertionError(where + ": the child recovered writer " + i + " to commit "
                                + r.recovered[i] + ", expected one in [" + lo[i] + ", " + hi[i] + "]\n"
                                + child.describe());
                    }
                    // As in runCycles: ASYNC promises only a prefix, SYNC and NONE (on a process kill) every ACK.
                    lo[i] = durability != Durability.ASYNC ? r.acknowledged[i] : r.recovered[i];
                    hi[i] = r.acknowledged[i] + 1;
                }
            }
            if (cycle == cycles - 1 || rnd.nextInt(3) != 0) {
                verifications++;
                try (Environment env = Environment.open(dir, AccountsWorkload.options())) {
                    ConcurrentWritersWorkload.Indexes ix = ConcurrentWritersWorkload.open(env);
                    try {
                        TreeChecks.verify(env);
                    } catch (RuntimeException e) {
                        throw new AssertionError(where + ": the invariant check after reopening failed: " + e, e);
                    }
                    verified = w.verify(env, ix, verified, lo, hi, where);
                }
                long[] commits = new long[WRITERS];
                for (int i = 0; i < WRITERS; i++) {
                    commits[i] = verified[i].commits;
                    unacknowledgedSurvivors += r.recovered != null && commits[i] == r.acknowledged[i] + 1 ? 1 : 0;
                }
                history.add("verified: commits " + Arrays.toString(commits));
                lo = commits.clone();
                hi = commits.clone();
            }
        }
        long[] commits = new long[WRITERS];
        for (int i = 0; i < WRITERS; i++) {
            commits[i] = verified[i].commits;
        }
        System.out.printf(Locale.ROOT,
                "CrashRecoveryTest %s with %d writers: %d kill cycles (%d during start-up, %d verified) in %.1f s: "
                        + "%d acknowledged commits, %d write conflicts, %d explicit checkpoints, data ends at commits "
                        + "%s; %d times an unacknowledged commit survived; stdout missed %d ACK lines in all%n",
                durability, WRITERS, cycles, earlyKills, verifications, (System.nanoTime() - started) / 1e9, acks,
                conflicts, checkpoints, Arrays.toString(commits), unacknowledgedSurvivors, stdoutBehind);
        assertTrue(Arrays.stream(commits).allMatch(c -> c > 0), "a writer never committed");
        assertTrue(conflicts > 0, "the writers never conflicted, so the shared counters were never contended");
    }
}
