package io.betree.txn;

import io.betree.internal.fault.BetreeException;
import io.betree.internal.log.LogReader;
import io.betree.internal.log.LogRecordType;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Prints every record of a write-ahead log directory: one line per record with its LSN, type and
 * decoded payload, then a summary. Reads only; a torn tail that opening the log would discard is
 * reported, not removed.
 *
 * <pre>
 * mvn -q -pl txn -am compile exec:java@logdump -Dexec.args="path/to/log-dir [from-lsn]"
 * </pre>
 *
 * <p>Exit status: 0 when the log reads cleanly (a torn tail included), 1 when it is damaged or cannot
 * be read, 2 for a usage error.
 */
public final class LogDump {

    private LogDump() {
    }

    /** Runs the dump on {@code args} and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Dumps the log named by {@code args} ({@code <log-directory> [<from-lsn>]}) to {@code out},
     * reporting problems to {@code err}.
     *
     * @return the exit status (see the class comment)
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length < 1 || args.length > 2) {
            err.println("usage: LogDump <log-directory> [<from-lsn>]");
            return 2;
        }
        Path dir = Path.of(args[0]);
        long fromLsn;
        try {
            fromLsn = args.length == 2 ? Long.parseLong(args[1]) : 0;
        } catch (NumberFormatException e) {
            err.println("not an LSN: " + args[1]);
            return 2;
        }
        if (!Files.isDirectory(dir)) {
            err.println("not a directory: " + dir);
            return 2;
        }
        long[] count = new long[LogRecordType.values().length];
        try {
            LogReader.Result r = LogReader.read(StorageEnv.defaultEnv(), dir, fromLsn, (lsn, type, payload) -> {
                count[type.ordinal()]++;
                out.printf("%12d  %-12s  %s%n", lsn, type, type.describe(payload));
            });
            StringBuilder summary = new StringBuilder("# ");
            long total = 0;
            for (LogRecordType t : LogRecordType.values()) {
                if (count[t.ordinal()] > 0) { // the kinds present only
                    summary.append(count[t.ordinal()]).append(' ').append(t).append(", ");
                    total += count[t.ordinal()];
                }
            }
            out.println(summary.append(total).append(" records shown; log spans LSNs [").append(r.firstLsn())
                    .append(", ").append(r.endLsn()).append(')'));
            if (r.discardedBytes() > 0) {
                out.println("# torn tail: " + r.discardedBytes() + " bytes at offset " + r.lastSegmentBytes() + " of "
                        + r.lastSegment() + " (" + r.discardReason() + ") would be discarded when the log is opened");
            }
            return 0;
        } catch (BetreeException e) {
            err.println("damaged log: " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("cannot read " + dir + ": " + e);
            return 1;
        }
    }
}
