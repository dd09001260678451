package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.Codec;
import io.betree.CorruptionException;
import io.betree.Cursor;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * An executable tutorial: the README's usage example (and {@code examples/.../QuickStart.java},
 * which runs it at scale), step by step, with every claim checked. Read it top to bottom; each test is one step and stands on
 * its own, so any of them can also be run alone.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TutorialTest {

    /** Every step gets a fresh, empty directory; an environment is just a directory. */
    @TempDir
    Path dir;

    /** Keys and values are plain byte arrays; betree never interprets them. */
    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    @Order(0)
    void step0_theReadmeExampleAsItStands() {
        // The README's "Usage" snippet, verbatim apart from the definitions it leaves out. The
        // steps below take it apart.
        Path data = dir.resolve("data");
        byte[] key = utf8("order-00042");
        byte[] value = utf8("customer-42;amount=126");
        byte[] from = utf8("order-00040");
        byte[] to = utf8("order-00046");
        List<String> processed = new ArrayList<>();

        try (Environment env = Environment.open(data,
                EnvironmentOptions.defaults().cacheBytes(256L << 20))) {
            Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));
            orders.put(key, value);                  // byte[] keys and values, unsigned lexicographic order
            byte[] v = orders.get(key);              // null when absent
            assertArrayEquals(value, v);
            orders.put(utf8("order-00041"), utf8("customer-7;amount=123"));
            orders.delete(key);
            try (Cursor c = orders.scan(from, to)) { // from inclusive, to exclusive; null = open end
                while (c.next()) {
                    processed.add(str(c.key()) + " -> " + str(c.value())); // process(c.key(), c.value())
                }
            }
            env.checkpoint();                        // durable now; close() also checkpoints
        }
        assertEquals(List.of("order-00041 -> customer-7;amount=123"), processed);
    }

    @Test
    @Order(1)
    void step1_openAnEnvironmentAndAnIndex() {
        // An Environment is a directory holding one data file with any number of named indexes, and
        // one off-heap node cache that all of them share. Open creates the directory if needed.
        // The cache lives outside the Java heap (see OffHeapMemoryTest); 64 MiB is plenty here.
        EnvironmentOptions options = EnvironmentOptions.defaults().cacheBytes(64L << 20);

        // Environment is AutoCloseable: try-with-resources checkpoints and releases everything.
        try (Environment env = Environment.open(dir, options)) {
            // An Index is a sorted map from byte[] keys to byte[] values. openIndex creates it on
            // first use; the options pick the block compression codec (LZ4 is the default).
            Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));

            assertEquals("orders", orders.name());
            assertEquals(List.of("orders"), env.indexNames());
            assertTrue(Files.exists(dir.resolve("betree.data")), "the data file lives in the directory");
        }
    }

    @Test
    @Order(2)
    void step2_putGetOverwriteDelete() {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));

            // put stores a value under a key; a later put of the same key replaces it.
            for (int i = 0; i < 100_000; i++) {
                orders.put(utf8(String.format("order-%05d", i)), utf8("customer-" + (i % 977) + ";amount=" + i * 3));
            }

            // get returns a copy of the value, or null when the key is absent.
            assertEquals("customer-42;amount=126", str(orders.get(utf8("order-00042"))));
            assertNull(orders.get(utf8("order-99999999")));

            orders.put(utf8("order-00042"), utf8("customer-42;amount=127"));
            assertEquals("customer-42;amount=127", str(orders.get(utf8("order-00042"))));

            // delete removes a key; deleting an absent key is not an error.
            orders.delete(utf8("order-00043"));
            assertNull(orders.get(utf8("order-00043")));
            orders.delete(utf8("no-such-order"));
        }
    }

    @Test
    @Order(3)
    void step3_scanARange() {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders");
            for (int i = 0; i < 100; i++) {
                orders.put(utf8(String.format("order-%05d", i)), utf8("amount=" + i * 3));
            }
            orders.delete(utf8("order-00043"));

            // scan(from, to) visits keys from <= key < to in ascending order. Keys compare as
            // unsigned bytes, so fixed-width, zero-padded numbers sort numerically. A Cursor must be
            // closed: use try-with-resources. It holds no locks, so writers are never blocked.
            List<String> seen = new ArrayList<>();
            try (Cursor c = orders.scan(utf8("order-00040"), utf8("order-00046"))) {
                while (c.next()) {
                    seen.add(str(c.key()) + " -> " + str(c.value()));
                }
            }
            assertEquals(List.of("order-00040 -> amount=120", "order-00041 -> amount=123",
                    "order-00042 -> amount=126", "order-00044 -> amount=132", "order-00045 -> amount=135"), seen);

            // A null bound leaves that end open; scan() is the whole index.
            int count = 0;
            try (Cursor c = orders.scan(utf8("order-00090"), null)) {
                while (c.next()) {
                    count++;
                }
            }
            assertEquals(10, count);
        }
    }

    @Test
    @Order(4)
    void step4_binaryKeysSortAsUnsignedBytes() {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index events = env.openIndex("events");
            // For numeric keys, write big-endian: unsigned byte order is then numeric order for
            // non-negative numbers (flip the sign bit to order negative numbers too).
            for (long t : new long[] {300, 5, 1L << 40, 70_000}) {
                events.put(ByteBuffer.allocate(8).putLong(t).array(), utf8("event at " + t));
            }
            List<Long> order = new ArrayList<>();
            try (Cursor c = events.scan()) {
                while (c.next()) {
                    order.add(ByteBuffer.wrap(c.key()).getLong());
                }
            }
            assertEquals(List.of(5L, 300L, 70_000L, 1L << 40), order);
        }
    }

    @Test
    @Order(5)
    void step5_durabilityCheckpointAndReopen() {
        // Writes are durable after checkpoint() or close(). After a crash the environment reopens at
        // its last checkpoint (ApiContractTest simulates one with a halted child JVM).
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders");
            orders.put(utf8("order-00001"), utf8("first"));
            env.checkpoint();
            orders.put(utf8("order-00002"), utf8("second"));
        } // close() checkpoints too

        // Reopening finds the indexes and their data. The codec may differ from last time: every
        // block records its own codec, so old blocks stay readable and new ones use the new codec.
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            assertEquals(List.of("orders"), env.indexNames());
            Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));
            assertEquals("first", str(orders.get(utf8("order-00001"))));
            assertEquals("second", str(orders.get(utf8("order-00002"))));
        }
    }

    @Test
    @Order(6)
    void step6_oneEnvironmentPerDirectory() {
        // A directory can be open in one Environment at a time, in this process or any other.
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            BetreeException e = assertThrows(BetreeException.class, () -> Environment.open(dir));
            assertTrue(e.getMessage().contains("already open"), e.getMessage());
            // Share the Environment instead: it and its indexes are thread-safe.
            env.openIndex("shared").put(utf8("k"), utf8("v"));
        }
    }

    @Test
    @Order(7)
    void step7_errors() throws Exception {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders");
            // Misuse is reported with the standard exceptions...
            assertThrows(NullPointerException.class, () -> orders.put(null, utf8("v")));
            assertThrows(IllegalArgumentException.class, () -> orders.put(new byte[Index.MAX_KEY_BYTES + 1], utf8("v")));
        }
        // ...and failures of the engine or its files with BetreeException and its subclasses:
        // CorruptionException when stored data fails a check (its message names the file), and
        // BetreeIOException when the file system fails.
        Path notADatabase = dir.resolve("elsewhere");
        Files.createDirectories(notADatabase);
        Files.writeString(notADatabase.resolve("betree.data"), "just some text");
        CorruptionException e = assertThrows(CorruptionException.class, () -> Environment.open(notADatabase));
        assertTrue(e.getMessage().contains(notADatabase.resolve("betree.data").toString()), e.getMessage());
    }

    @Test
    @Order(8)
    void step8_monitoring() {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            Index orders = env.openIndex("orders");
            for (int i = 0; i < 10_000; i++) {
                orders.put(utf8(String.format("order-%05d", i)), utf8("x".repeat(100)));
            }
            // cacheStats() counts cache entries, bytes, misses, evictions and write-backs;
            // offHeapBytes() is what the environment holds outside the Java heap right now.
            assertEquals(64L << 20, env.cacheStats().budgetBytes());
            assertTrue(env.offHeapBytes() > 0);
            assertTrue(env.cacheStats().bytes() <= env.cacheStats().budgetBytes());
            env.checkpoint();
            assertTrue(env.cacheStats().writeBacks() > 0, "the checkpoint wrote the dirty nodes");
        }
    }

    @Test
    @Order(9)
    void step9_updatesWithoutReads() {
        // A function registered by name before open; the README's counter.
        EnvironmentOptions options = EnvironmentOptions.defaults().cacheBytes(64L << 20)
                .updateFunction("add", (key, old, arg) -> {
                    long sum = (old == null ? 0 : ByteBuffer.wrap(old).getLong()) + ByteBuffer.wrap(arg).getLong();
                    return ByteBuffer.allocate(8).putLong(sum).array();
                });
        byte[] one = ByteBuffer.allocate(8).putLong(1).array();
        try (Environment env = Environment.open(dir, options)) {
            Index counters = env.openIndex("counters");
            for (int i = 0; i < 1_000; i++) {
                counters.update(utf8("page-views"), "add", one); // no read: a message that meets the value later
            }
            assertEquals(1_000, ByteBuffer.wrap(counters.get(utf8("page-views"))).getLong());
            // A name nobody registered is refused at the call.
            assertThrows(IllegalArgumentException.class, () -> counters.update(utf8("x"), "multiply", one));
        }
        // Updates are stored with their function's name: reopen with the same registrations.
        try (Environment env = Environment.open(dir, options)) {
            assertEquals(1_000, ByteBuffer.wrap(env.openIndex("counters").get(utf8("page-views"))).getLong());
        }
    }

    @Test
    @Order(10)
    void step10_manyRowsInOneWriteAndRowsThatExpire() {
        // "add-column" appends its argument; a broadcast calls it on every row present.
        EnvironmentOptions options = EnvironmentOptions.defaults().cacheBytes(64L << 20)
                .updateFunction("add-column", (key, old, arg) -> {
                    byte[] joined = java.util.Arrays.copyOf(old == null ? new byte[0] : old,
                            (old == null ? 0 : old.length) + arg.length);
                    System.arraycopy(arg, 0, joined, joined.length - arg.length, arg.length);
                    return joined;
                });
        try (Environment env = Environment.open(dir, options)) {
            Index events = env.openIndex("events");
            for (int i = 0; i < 100; i++) {
                events.put(utf8(String.format("event-%03d", i)), utf8("e"));
            }
            events.updateAll("add-column", utf8("+v2"));                     // one message, any row count
            events.deleteRange(utf8("event-000"), utf8("event-050"));       // likewise
            assertEquals("e+v2", str(events.get(utf8("event-050"))));
            assertNull(events.get(utf8("event-049")));
            // A row with a TTL: no read sees it from its expiry on (EnvironmentOptions.clock).
            events.put(utf8("session"), utf8("token"), java.time.Duration.ofMinutes(30));
            assertEquals("token", str(events.get(utf8("session"))));
            int rows = 0;
            try (Cursor c = events.scan()) {
                while (c.next()) {
                    rows++;
                }
            }
            assertEquals(51, rows);
        }
    }
}
