package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Durability;
import io.betree.Environment;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
 * <p>Reproduce the workload with {@code -Dbetree.seed=N} (kill timing is wall-clock dependent);
 * {@code -Dbetree.crashCycles=N} sets the number of kill cycles (default 30 for SYNC, half as many
 * for ASYNC, a quarter for NONE).
 */
class CrashRecoveryTest {
    private static final int CYCLES = Integer.getInteger("betree.crashCycles", 30);
    private static final int IDS = 300;
    private static final int OWNERS = 25;
    private static final int MAX_PAYLOAD = 400;

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

    private void run(Durability durability, int cycles) throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "CrashRecoveryTest %s: seed %d (-Dbetree.seed=%d), %d cycles%n", durability,
                seed, seed, cycles);
        try {
            runCycles(durability, cycles, seed);
        } catch (AssertionError | Exception e) {
            throw new AssertionError("crash recovery under " + durability + " failed; rerun with -Dbetree.seed=" + seed
                    + " (" + e.getMessage() + ")", e);
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
            Child child = Child.start(dir, durability, w, rnd.nextLong(), work.resolve("child.err"),
                    work.resolve("child.protocol"));
            try {
                if (early) {
                    earlyKills++;
                    Thread.sleep(rnd.nextInt(700));
                } else {
                    assertTrue(child.awaitStart(60), () -> "the child did not start within 60 s\n" + child.describe());
                    Thread.sleep(200 + rnd.nextInt(1300));
                }
            } finally {
                child.kill();
            }
            history.add(String.format(Locale.ROOT, "cycle %d: %s kill, START %d, last ACK %d (on stdout %d), %d ACKs, %s",
                    cycle, early ? "early" : "late", child.start, child.lastAck, child.stdoutLastAck, child.acks,
                    child.unexpected));
            stdoutBehind += child.lastAck - child.stdoutLastAck;
            String where = "cycle " + cycle + " (" + durability + ")\nhistory:\n  " + String.join("\n  ", history)
                    + "\n";
            if (child.exitedOnItsOwn) {
                throw new AssertionError(where + ": the child died before it was killed\n" + child.describe());
            }
            if (child.protocolError != null) {
                throw new AssertionError(where + ": " + child.protocolError + "\n" + child.describe());
            }
            acks += child.acks;
            checkpoints += child.checkpoints;
            if (child.start > 0) {
                long recovered = child.start - 1;
                if (recovered < lo || recovered > hi) {
                    throw new AssertionError(where + ": the child recovered the state after commit " + recovered
                            + ", expected one in [" + lo + ", " + hi + "]\n" + child.describe());
                }
                long reached = Math.max(recovered, child.lastAck);
                // A process kill loses nothing the OS received: SYNC promises the acknowledged commits
                // anyway, NONE promises them for a process crash; ASYNC only a prefix.
                lo = durability != Durability.ASYNC ? reached : recovered;
                hi = reached + 1;
            }
            boolean verify = cycle == cycles - 1 || rnd.nextInt(3) != 0;
            if (verify) {
                verifications++;
                long lastAck = child.lastAck;
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

    /**
     * A running {@link CrashWorkload}. Its protocol file is the record of what it acknowledged; its
     * stdout is read too, only to compare (see the class comment of {@link CrashWorkload}).
     */
    private static final class Child {
        final Process process;
        final Thread reader;
        final Path stderr;
        final Path protocolFile;
        final List<String> unexpected = new ArrayList<>();
        /** From the protocol file, once the child is dead. */
        long start;
        long lastAck;
        long acks;
        int checkpoints;
        String protocolError;
        /** From stdout, for comparison. */
        volatile long stdoutLastAck;
        boolean exitedOnItsOwn;

        private Child(Process process, Path stderr, Path protocolFile) {
            this.process = process;
            this.stderr = stderr;
            this.protocolFile = protocolFile;
            this.reader = new Thread(this::readStdout, "crash-child-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(Path dir, Durability durability, AccountsWorkload w, long checkpointSeed, Path stderr,
                Path protocolFile) throws IOException {
            Files.deleteIfExists(protocolFile);
            List<String> command = new ArrayList<>(List.of(ChildJvm.javaBinary(), "-Xmx256m", "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", ChildJvm.classPath(), CrashWorkload.class.getName(),
                    dir.toString(), durability.name(), Long.toString(w.seed), Integer.toString(w.ids),
                    Integer.toString(w.owners), Integer.toString(w.maxPayload), Long.toString(checkpointSeed),
                    protocolFile.toString()));
            Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
            return new Child(p, stderr, protocolFile);
        }

        private void readStdout() {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("ACK ")) {
                        try {
                            stdoutLastAck = Long.parseLong(line.substring(4).trim());
                        } catch (NumberFormatException e) {
                            // Cut by the kill.
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // The pipe breaks when the child dies.
            }
        }

        /** Whether the child reported START within {@code seconds}. */
        boolean awaitStart(int seconds) throws InterruptedException, IOException {
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            while (System.nanoTime() < deadline) {
                if (Files.exists(protocolFile) && Files.readString(protocolFile, StandardCharsets.US_ASCII)
                        .startsWith("START ")) {
                    return true;
                }
                if (!process.isAlive()) {
                    return false;
                }
                Thread.sleep(5);
            }
            return false;
        }

        void kill() throws InterruptedException, IOException {
            exitedOnItsOwn = !process.isAlive();
            process.destroyForcibly();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("the child did not die after SIGKILL");
            }
            reader.join(60_000);
            parseProtocol();
        }

        /** Reads the protocol file; a last line without its newline was cut by the kill and is ignored. */
        private void parseProtocol() throws IOException {
            if (!Files.exists(protocolFile)) {
                return;
            }
            String text = Files.readString(protocolFile, StandardCharsets.US_ASCII);
            int end = text.lastIndexOf('\n');
            if (end + 1 < text.length()) {
                unexpected.add("(cut) " + text.substring(end + 1));
            }
            for (String line : text.substring(0, end + 1).split("\n")) {
                if (line.isEmpty()) {
                    continue;
                }
                if (line.startsWith("START ")) {
                    start = Long.parseLong(line.substring(6));
                } else if (line.startsWith("ACK ")) {
                    long seq = Long.parseLong(line.substring(4));
                    long expected = lastAck > 0 ? lastAck + 1 : start;
                    if (seq != expected && protocolError == null) {
                        protocolError = "ACK " + seq + " where " + expected + " was expected";
                    }
                    lastAck = seq;
                    acks++;
                } else if (line.startsWith("CHECKPOINT ")) {
                    checkpoints++;
                } else {
                    unexpected.add(line);
                }
            }
        }

        String describe() {
            String err;
            try {
                err = Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
            } catch (IOException e) {
                err = "(unreadable: " + e + ")";
            }
            if (err.length() > 20_000) {
                err = err.substring(0, 20_000) + "...";
            }
            return "child: START " + start + ", last ACK " + lastAck + " (on stdout: " + stdoutLastAck + "), " + acks
                    + " ACKs, alive " + process.isAlive() + (process.isAlive() ? "" : ", exit " + process.exitValue())
                    + "\nother lines: " + unexpected + "\n--- stderr ---\n" + err;
        }
    }
}
