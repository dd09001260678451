package io.betree.systest;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Transaction;
import io.betree.WriteConflictException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Child-JVM main of the concurrent scenarios of {@link CrashRecoveryTest}: opens the environment
 * (recovering it), reports {@code START c0 c1 ...} with the last commit of each writer it found, then
 * runs every writer of a {@link ConcurrentWritersWorkload} on a thread of its own, committing
 * forever. Writer {@code w} reports {@code ACK w n} only after {@code commit()} of its commit
 * {@code n} returned, and {@code CONFLICT w n} each time that commit failed with a
 * {@link WriteConflictException} (it then runs the commit again in a new transaction). Meanwhile
 * the main thread calls {@code checkpoint()} at random moments (reporting {@code CHECKPOINT});
 * periodic checkpoints run every 200 ms besides. It is meant to be killed with SIGKILL: an exception
 * on any thread halts it at once with exit code 3, which the parent reports as a child that died
 * before it was killed.
 *
 * <p>Reports are appended to a protocol file as {@link CrashWorkload}'s are (one unbuffered write per
 * line, copied to stdout), one thread at a time so that lines never interleave. A writer reports
 * commit {@code n} before it begins commit {@code n + 1}, so each writer's ACK lines come in its
 * commit order.
 *
 * <p>Arguments: directory, durability (SYNC/ASYNC/NONE), workload seed, writers, slots per writer,
 * counters, max payload, checkpoint seed, protocol file.
 */
public final class ConcurrentCrashWorkload {
    private final FileOutputStream protocol;

    private ConcurrentCrashWorkload(FileOutputStream protocol) {
        this.protocol = protocol;
    }

    private synchronized void report(String line) {
        try {
            protocol.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            System.err.println("uncaught exception on " + thread.getName() + ":");
            e.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(3);
        });
        Path dir = Path.of(args[0]);
        Durability durability = Durability.valueOf(args[1]);
        ConcurrentWritersWorkload w = new ConcurrentWritersWorkload(Long.parseLong(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
        Random checkpoints = new Random(Long.parseLong(args[7]));
        ConcurrentCrashWorkload out = new ConcurrentCrashWorkload(new FileOutputStream(args[8], true));
        EnvironmentOptions options = AccountsWorkload.options().durability(durability)
                .checkpointInterval(Duration.ofMillis(200)).syncInterval(Duration.ofMillis(20));
        Environment env = Environment.open(dir, options);
        ConcurrentWritersWorkload.Indexes ix = ConcurrentWritersWorkload.open(env);
        long[] progress = w.progress(ix);
        StringBuilder start = new StringBuilder("START");
        for (long c : progress) {
            start.append(' ').append(c);
        }
        out.report(start.toString());
        for (int i = 0; i < w.writers; i++) {
            int writer = i;
            new Thread(() -> out.runWriter(env, ix, w, writer, progress[writer] + 1), "writer-" + writer).start();
        }
        while (true) {
            Thread.sleep(checkpoints.nextInt(300));
            env.checkpoint();
            out.report("CHECKPOINT");
        }
    }

    /** Runs the commits of {@code writer} from {@code first} on, forever. */
    private void runWriter(Environment env, ConcurrentWritersWorkload.Indexes ix, ConcurrentWritersWorkload w,
            int writer, long first) {
        for (long n = first;; n++) {
            while (true) {
                try (Transaction txn = env.begin()) {
                    w.apply(txn, ix, writer, n);
                    txn.commit();
                    break;
                } catch (WriteConflictException e) {
                    report("CONFLICT " + writer + " " + n);
                }
            }
            report("ACK " + writer + " " + n);
        }
    }

    /** What the protocol of a killed child says. */
    static final class Report {
        /** The last commit of each writer the child found at start; null if it never reported START. */
        long[] recovered;
        /** Each writer's last acknowledged commit, or the recovered one while it acknowledged none. */
        long[] acknowledged;
        long acks;
        long conflicts;
        int checkpoints;
        /** The first line that breaks the protocol, or null. */
        String protocolError;
        /** Lines of no known kind, and a last line cut by the kill. */
        final List<String> unexpected = new ArrayList<>();

        /** Parses the complete {@code lines} of a protocol whose last line {@code cutLine} (or null) was cut. */
        static Report parse(List<String> lines, String cutLine, int writers) {
            Report r = new Report();
            if (cutLine != null) {
                r.unexpected.add("(cut) " + cutLine);
            }
            for (String line : lines) {
                String[] f = line.split(" ");
                if (f[0].equals("START") && f.length == writers + 1 && r.recovered == null) {
                    r.recovered = new long[writers];
                    for (int i = 0; i < writers; i++) {
                        r.recovered[i] = Long.parseLong(f[i + 1]);
                    }
                    r.acknowledged = r.recovered.clone();
                } else if ((f[0].equals("ACK") || f[0].equals("CONFLICT")) && f.length == 3) {
                    int writer = Integer.parseInt(f[1]);
                    long n = Long.parseLong(f[2]);
                    if (r.recovered == null || writer < 0 || writer >= writers
                            || n != r.acknowledged[writer] + 1) {
                        r.protocolError = r.protocolError != null ? r.protocolError
                                : "'" + line + "' where the writers' acknowledged commits were "
                                        + (r.acknowledged == null ? "unknown (no START)" : Arrays.toString(r.acknowledged));
                    } else if (f[0].equals("ACK")) {
                        r.acknowledged[writer] = n;
                        r.acks++;
                    } else {
                        r.conflicts++;
                    }
                } else if (line.equals("CHECKPOINT")) {
                    r.checkpoints++;
                } else {
                    r.unexpected.add(line);
                }
            }
            return r;
        }
    }
}
