package io.betree.systest;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Child-JVM program: opens the environment in {@code args[0]}, scans every index and gets every key
 * the scans returned (or, with {@code args[1]} {@code get-empty-key}, only gets the empty key of every
 * index, a lookup that follows each node's first child), then prints one line {@code OUTCOME intact <rows>} or
 * {@code OUTCOME <exception class> <message>} (stack trace on stderr) and exits 0. Anything that
 * escapes (an Error, say) exits non-zero. Used for damage that might hang or exhaust memory, which
 * must not take the test JVM down with it.
 */
public final class ReadEverything {
    private ReadEverything() {
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        long rows = 0;
        boolean emptyKeyOnly = args.length > 1 && args[1].equals("get-empty-key");
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(32L << 20))) {
            for (String name : env.indexNames()) {
                if (emptyKeyOnly) {
                    env.openIndex(name).get(new byte[0]);
                    continue;
                }
                Index index = env.openIndex(name);
                List<byte[]> keys = new ArrayList<>();
                try (Cursor c = index.scan()) {
                    while (c.next()) {
                        keys.add(c.key());
                        rows++;
                    }
                }
                for (byte[] k : keys) {
                    if (index.get(k) == null) {
                        throw new IllegalStateException("index " + name + ": scanned key " + Dataset.hex(k)
                                + " has no value");
                    }
                }
            }
        } catch (RuntimeException e) {
            System.out.println("OUTCOME " + e.getClass().getName() + " " + e.getMessage());
            e.printStackTrace();
            return;
        }
        System.out.println("OUTCOME intact " + rows);
    }
}
