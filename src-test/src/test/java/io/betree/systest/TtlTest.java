package io.betree.systest;

import static io.betree.systest.UpdateFunctionTest.key;
import static io.betree.systest.UpdateFunctionTest.shape;
import static io.betree.systest.UpdateFunctionTest.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.Transaction;
import io.betree.TreeChecks;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rows with a TTL through the public API, against a clock the test moves by hand: reads, scans
 * and transactions stop seeing a row at its expiry, whatever their snapshot; an index's default TTL;
 * expiry that survives reopening from the log and from a checkpoint; updates that keep the expiry;
 * a spilled transaction's expiring writes; misuse.
 */
class TtlTest {
    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();

    private EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20).durability(Durability.NONE).clock(clock)
                .updateFunction("append", UpdateFunctionTest.APPEND);
    }

    @Test
    void rowsDisappearAtTheirExpiryForEveryReader() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int i = 0; i < 3_000; i++) {
                if (i % 3 == 0) {
                    idx.put(key(i), text("lasting"));
                } else {
                    idx.put(key(i), text("v" + i), Duration.ofSeconds(i % 3 == 1 ? 10 : 20));
                }
            }
            try (Transaction old = env.begin()) {
                assertEquals(3_000, count(idx.scan()));
                clock.advance(Duration.ofSeconds(10));
                assertNull(idx.get(key(1)), "expired at its instant");
                assertArrayEquals(text("v2"), idx.get(key(2)));
                assertEquals(2_000, count(idx.scan()));
                assertNull(idx.get(old, key(1)), "a snapshot from before does not keep it");
                assertEquals(2_000, count(idx.scan(old, null, null)));
                clock.advance(Duration.ofSeconds(10));
                assertEquals(1_000, count(idx.scan()));
            }
            idx.put(key(1), text("back"));
            assertArrayEquals(text("back"), idx.get(key(1)), "a put after the expiry writes the key again");
            TreeChecks.verify(env);
        }
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            assertEquals(1_001, count(idx.scan()), "after reopening");
        }
    }

    @Test
    void expiryIsKeptAcrossACheckpointAndTheLog() throws Exception {
        Path live = dir.resolve("live");
        Path image = dir.resolve("image");
        try (Environment env = Environment.open(live, options().durability(Durability.SYNC)
                .checkpointInterval(Duration.ZERO))) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(1), text("checkpointed"), Duration.ofMinutes(1));
            env.checkpoint();
            idx.put(key(2), text("in the log"), Duration.ofMinutes(1));
            // What a crash now leaves: the second put is in the log only (a close would checkpoint it).
            CrashImage.copy(live, image);
        }
        try (Environment env = Environment.open(image, options())) {
            Index idx = env.openIndex("t", shape());
            assertArrayEquals(text("checkpointed"), idx.get(key(1)));
            assertArrayEquals(text("in the log"), idx.get(key(2)));
            clock.advance(Duration.ofMinutes(1));
            assertNull(idx.get(key(1)));
            assertNull(idx.get(key(2)));
        }
    }

    @Test
    void anIndexTtlAppliesToPutsWithoutTheirOwn() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape().ttl(Duration.ofSeconds(5)));
            idx.put(key(1), text("default"));
            idx.put(key(2), text("own"), Duration.ofSeconds(50));
            try (Transaction txn = env.begin()) {
                idx.put(txn, key(3), text("in a transaction"));
                txn.commit();
            }
            clock.advance(Duration.ofSeconds(5));
            assertNull(idx.get(key(1)));
            assertNull(idx.get(key(3)));
            assertArrayEquals(text("own"), idx.get(key(2)));
            env.openIndex("t", shape().ttl(Duration.ZERO)).put(key(4), text("lasting"));
            clock.advance(Duration.ofDays(1000));
            assertArrayEquals(text("lasting"), idx.get(key(4)));
        }
    }

    @Test
    void aTransactionSeesItsOwnExpiringWritesExpireAndItsUpdatesKeepTheExpiry() {
        try (Environment env = Environment.open(dir, options().transactionMemoryBytes(1024))) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(0), text("base"), Duration.ofSeconds(10));
            idx.update(key(0), "append", text("+u"));
            assertArrayEquals(text("base+u"), idx.get(key(0)), "an update before the expiry changes the value");
            try (Transaction txn = env.begin()) {
                // Enough writes to move them to a temporary file (1 KiB of heap), then some on the heap.
                for (int i = 1; i <= 60; i++) {
                    idx.put(txn, key(i), text("value-" + i), Duration.ofSeconds(i <= 30 ? 10 : 20));
                }
                idx.update(txn, key(45), "append", text("+t"));
                assertArrayEquals(text("value-45+t"), idx.get(txn, key(45)));
                assertEquals(61, count(idx.scan(txn, null, null)));
                clock.advance(Duration.ofSeconds(10));
                assertNull(idx.get(txn, key(5)), "a spilled expiring write, expired");
                idx.delete(txn, key(0)); // an update that meets a value after its expiry starts from none (see Index.put)
                assertEquals(30, count(idx.scan(txn, null, null)));
                txn.commit();
            }
            assertEquals(30, count(idx.scan()));
            assertArrayEquals(text("value-45+t"), idx.get(key(45)));
            clock.advance(Duration.ofSeconds(10));
            assertNull(idx.get(key(45)), "the update in the transaction kept the expiry");
            assertEquals(0, count(idx.scan()));
        }
    }

    @Test
    void misuseIsRefused() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            assertThrows(IllegalArgumentException.class, () -> idx.put(key(1), text("v"), Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> idx.put(key(1), text("v"), Duration.ofSeconds(-1)));
            assertThrows(NullPointerException.class, () -> idx.put(key(1), text("v"), null));
            assertThrows(IllegalArgumentException.class, () -> shape().ttl(Duration.ofSeconds(-1)));
            assertThrows(NullPointerException.class, () -> EnvironmentOptions.defaults().clock(null));
            idx.put(key(1), text("forever, nearly"), Duration.ofSeconds(Long.MAX_VALUE));
            clock.advance(Duration.ofDays(365L * 1000));
            assertArrayEquals(text("forever, nearly"), idx.get(key(1)), "a huge TTL saturates instead of wrapping");
        }
    }

    private static int count(Cursor c) {
        try (c) {
            int n = 0;
            while (c.next()) {
                n++;
            }
            return n;
        }
    }
}
