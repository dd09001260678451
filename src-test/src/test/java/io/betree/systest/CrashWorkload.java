package io.betree.systest;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Child-JVM main of {@link CrashRecoveryTest}: opens the environment (recovering it), reports
 * {@code START <seq>} with the first seq it is about to run, then commits {@link AccountsWorkload}
 * transactions forever, reporting {@code ACK <seq>} only after {@code commit()} returned, and now
 * and then calls {@code checkpoint()}; periodic checkpoints run every 200 ms besides. It is meant to
 * be killed with SIGKILL.
 *
 * <p>Reports are appended to a protocol file, each line with a single unbuffered write, so that
 * every line that reached the kernel before the kill is still there afterwards; they are copied to
 * stdout for humans. (The parent does not rely on stdout: the last lines written to a pipe by a
 * process that is then SIGKILLed were observed to go missing on the reading side.)
 *
 * <p>Arguments: directory, durability (SYNC/ASYNC/NONE), workload seed, ids, owners, max payload,
 * checkpoint seed, protocol file.
 */
public final class CrashWorkload {
    private final FileOutputStream protocol;

    private CrashWorkload(FileOutputStream protocol) {
        this.protocol = protocol;
    }

    private void report(String line) throws IOException {
        protocol.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Durability durability = Durability.valueOf(args[1]);
        AccountsWorkload w = new AccountsWorkload(Long.parseLong(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        Random checkpoints = new Random(Long.parseLong(args[6]));
        CrashWorkload out = new CrashWorkload(new FileOutputStream(args[7], true));
        EnvironmentOptions options = AccountsWorkload.options().durability(durability)
                .checkpointInterval(Duration.ofMillis(200)).syncInterval(Duration.ofMillis(20));
        Environment env = Environment.open(dir, options);
        AccountsWorkload.Indexes ix = AccountsWorkload.open(env);
        long seq = AccountsWorkload.lastSeq(env, ix) + 1;
        out.report("START " + seq);
        while (true) {
            w.commit(env, ix, seq);
            out.report("ACK " + seq);
            seq++;
            if (checkpoints.nextInt(60) == 0) {
                env.checkpoint();
                out.report("CHECKPOINT " + (seq - 1));
            }
        }
    }

    /** What the protocol of a killed child says. */
    static final class Report {
        /** The first seq the child was about to run; 0 if it never reported START. */
        long start;
        /** The last seq it acknowledged; 0 if none. */
        long lastAck;
        long acks;
        int checkpoints;
        /** The first line that breaks the protocol, or null. */
        String protocolError;
        /** Lines of no known kind, and a last line cut by the kill. */
        final List<String> unexpected = new ArrayList<>();

        /** Parses the complete {@code lines} of a protocol whose last line {@code cutLine} (or null) was cut. */
        static Report parse(List<String> lines, String cutLine) {
            Report r = new Report();
            if (cutLine != null) {
                r.unexpected.add("(cut) " + cutLine);
            }
            for (String line : lines) {
                if (line.startsWith("START ")) {
                    r.start = Long.parseLong(line.substring(6));
                } else if (line.startsWith("ACK ")) {
                    long seq = Long.parseLong(line.substring(4));
                    long expected = r.lastAck > 0 ? r.lastAck + 1 : r.start;
                    if (seq != expected && r.protocolError == null) {
                        r.protocolError = "ACK " + seq + " where " + expected + " was expected";
                    }
                    r.lastAck = seq;
                    r.acks++;
                } else if (line.startsWith("CHECKPOINT ")) {
                    r.checkpoints++;
                } else {
                    r.unexpected.add(line);
                }
            }
            return r;
        }
    }
}
