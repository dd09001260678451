package io.betree.examples;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The README's example: opens (or creates) an environment in {@code ./betree-data} (or the
 * directory given as the first argument), writes orders, reads one back, scans a range, deletes,
 * and closes. Run it twice: the second run finds the first run's rows.
 */
public final class QuickStart {
    private QuickStart() {
    }

    public static void main(String[] args) {
        Path dir = Path.of(args.length > 0 ? args[0] : "betree-data");
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));
            byte[] previous = orders.get(utf8("order-00042"));
            System.out.println("environment: " + env.directory());
            System.out.println("order-00042 before this run: " + (previous == null ? "absent" : str(previous)));

            // 100,000 orders in transactions of 1,000: one log sync per transaction.
            for (int batch = 0; batch < 100; batch++) {
                try (Transaction txn = env.begin()) {
                    for (int i = batch * 1000; i < (batch + 1) * 1000; i++) {
                        orders.put(txn, utf8(String.format("order-%05d", i)), utf8("customer-" + (i % 977) + ";amount=" + i * 3));
                    }
                    txn.commit();
                }
            }
            System.out.println("order-00042 now: " + str(orders.get(utf8("order-00042"))));

            orders.delete(utf8("order-00043"));
            System.out.println("order-00043 after delete: " + orders.get(utf8("order-00043")));

            try (Cursor c = orders.scan(utf8("order-00040"), utf8("order-00046"))) {
                while (c.next()) {
                    System.out.println("  scan " + str(c.key()) + " -> " + str(c.value()));
                }
            }
            env.checkpoint();
            System.out.println("indexes: " + env.indexNames() + ", cache: " + env.cacheStats());
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
