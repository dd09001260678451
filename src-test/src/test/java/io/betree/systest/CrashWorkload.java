package io.betree.systest;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

/**
 * Child-JVM main of {@link CrashRecoveryTest}: opens the environment (recovering it), prints
 * {@code START <seq>} with the first seq it is about to run, then commits {@link AccountsWorkload}
 * transactions forever, printing {@code ACK <seq>} only after {@code commit()} returned, and now and
 * then calls {@code checkpoint()}; periodic checkpoints run every 200 ms besides. It is meant to be
 * killed with SIGKILL.
 *
 * <p>Arguments: directory, durability (SYNC/ASYNC/NONE), workload seed, ids, owners, max payload,
 * checkpoint seed.
 */
public final class CrashWorkload {
    private CrashWorkload() {
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        Durability durability = Durability.valueOf(args[1]);
        AccountsWorkload w = new AccountsWorkload(Long.parseLong(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        Random checkpoints = new Random(Long.parseLong(args[6]));
        PrintStream out = System.out;
        EnvironmentOptions options = AccountsWorkload.options().durability(durability)
                .checkpointInterval(Duration.ofMillis(200)).syncInterval(Duration.ofMillis(20));
        Environment env = Environment.open(dir, options);
        AccountsWorkload.Indexes ix = AccountsWorkload.open(env);
        long seq = AccountsWorkload.lastSeq(env, ix) + 1;
        out.println("START " + seq);
        out.flush();
        while (true) {
            w.commit(env, ix, seq);
            out.println("ACK " + seq);
            out.flush();
            seq++;
            if (checkpoints.nextInt(60) == 0) {
                env.checkpoint();
                out.println("CHECKPOINT " + (seq - 1));
                out.flush();
            }
        }
    }
}
