package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.Codec;
import io.betree.Cursor;
import io.betree.DirectoryInUseException;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The public API's promises, one by one: argument checks and their messages, size limits at and
 * beyond the edge, behaviour after close, the one-environment-per-directory lock (in this JVM and
 * across processes), cursor bounds and unsigned key order, durability across reopen for every codec,
 * codec changes between opens, and the list of index names.
 */
class ApiContractTest {
    @TempDir
    Path dir;

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    static List<String> keysOf(Cursor c) {
        List<String> keys = new ArrayList<>();
        try (c) {
            while (c.next()) {
                keys.add(new String(c.key(), StandardCharsets.ISO_8859_1));
            }
        }
        return keys;
    }

    // ----- arguments ------------------------------------------------------------------------------

    @Test
    void nullKeyOrValueIsANullPointerExceptionNamingTheArgument() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            assertEquals("key", assertThrows(NullPointerException.class, () -> index.put(null, b("v"))).getMessage());
            assertEquals("value", assertThrows(NullPointerException.class, () -> index.put(b("k"), null)).getMessage());
            assertEquals("key", assertThrows(NullPointerException.class, () -> index.get(null)).getMessage());
            assertEquals("key", assertThrows(NullPointerException.class, () -> index.delete(null)).getMessage());
            assertThrows(NullPointerException.class, () -> env.openIndex(null));
            assertThrows(NullPointerException.class, () -> env.openIndex("j", null));
            assertThrows(NullPointerException.class, () -> Environment.open(null));
            assertThrows(NullPointerException.class, () -> Environment.open(dir.resolve("x"), null));
            // Nothing was stored by the failed calls.
            assertEquals(List.of(), keysOf(index.scan()));
        }
    }

    @Test
    void oversizedKeyOrValueIsAnIllegalArgumentException() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            byte[] bigKey = new byte[Index.MAX_KEY_BYTES + 1];
            byte[] bigValue = new byte[Index.MAX_VALUE_BYTES + 1];
            assertEquals(32 << 10, Index.MAX_KEY_BYTES);
            assertEquals(16 << 20, Index.MAX_VALUE_BYTES);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> index.put(bigKey, b("v")));
            assertTrue(e.getMessage().contains(Integer.toString(Index.MAX_KEY_BYTES + 1)), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> index.put(b("k"), bigValue));
            assertTrue(e.getMessage().contains(Integer.toString(Index.MAX_VALUE_BYTES + 1)), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> index.get(bigKey));
            assertThrows(IllegalArgumentException.class, () -> index.delete(bigKey));
            assertEquals(List.of(), keysOf(index.scan()));
        }
    }

    /**
     * The largest key with the largest value, next to small entries on either side, survives a
     * reopen. Run in a child JVM (1 GiB heap, the default 128 MiB cache) so that a failure to
     * terminate cannot take the test JVM's CPU with it.
     */
    @ParameterizedTest
    @EnumSource(value = Codec.class, names = {"NONE", "ZSTD"})
    void largestKeyAndLargestValueRoundTrip(Codec codec) throws Exception {
        ChildJvm.Result r = ChildJvm.run(LargestEntries.class, List.of("-Xmx1g"),
                List.of(dir.resolve("env").toString(), codec.name()), dir, Duration.ofSeconds(25));
        System.out.println("largest key and value with " + codec + ": " + String.join("; ", r.stdout().lines()
                .filter(l -> l.startsWith("STEP ") || l.startsWith("OUTCOME ")).toList())
                + (r.timedOut() ? "; killed after the timeout" : ""));
        assertFalse(r.timedOut(), "did not finish in 25 s; last step: " + r.stdout().strip().lines()
                .reduce((a, c) -> c).orElse("(none)") + "\n" + r.describe());
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals("ok", r.field("OUTCOME"), r.describe());
    }

    /**
     * Child-JVM program: in {@code args[0]}, index codec {@code args[1]}, stores a 32 KiB key with a
     * 16 MiB value, then small keys sorting before and after it; reads them back, reopens, reads
     * them back again and scans. Prints each step ({@code STEP ...}) and {@code OUTCOME ok}.
     */
    public static final class LargestEntries {
        public static void main(String[] args) {
            Path dir = Path.of(args[0]);
            IndexOptions options = IndexOptions.defaults().codec(Codec.valueOf(args[1]));
            byte[] key = new byte[Index.MAX_KEY_BYTES];
            Arrays.fill(key, (byte) 'm');
            byte[] value = new byte[Index.MAX_VALUE_BYTES];
            for (int i = 0; i < value.length; i += 4096) {
                value[i] = (byte) (i >>> 12); // compressible, but not trivially
            }
            List<byte[]> keys = List.of(b("a-before"), key, b("z-after"));
            try (Environment env = Environment.open(dir)) {
                Index index = env.openIndex("big", options);
                step("put 32 KiB key with 16 MiB value");
                index.put(key, value);
                step("put a small key that sorts before it");
                index.put(b("a-before"), b("small"));
                step("put a small key that sorts after it");
                index.put(b("z-after"), b("small"));
                step("get");
                check(Arrays.equals(value, index.get(key)), "get of the largest entry");
            }
            step("reopen");
            try (Environment env = Environment.open(dir)) {
                Index index = env.openIndex("big", options);
                check(Arrays.equals(value, index.get(key)), "get of the largest entry after reopen");
                check(Arrays.equals(b("small"), index.get(b("a-before"))), "get a-before");
                check(Arrays.equals(b("small"), index.get(b("z-after"))), "get z-after");
                step("scan");
                try (Cursor c = index.scan()) {
                    for (byte[] k : keys) {
                        check(c.next() && Arrays.equals(k, c.key()), "scan order");
                        check(Arrays.equals(k == key ? value : b("small"), c.value()), "scanned value");
                    }
                    check(!c.next(), "scan end");
                }
                step("delete");
                index.delete(key);
                check(index.get(key) == null, "deleted");
            }
            System.out.println("OUTCOME ok");
        }

        static void step(String s) {
            System.out.println("STEP " + s);
        }

        static void check(boolean ok, String what) {
            if (!ok) {
                System.out.println("OUTCOME failed: " + what);
                System.exit(1);
            }
        }
    }

    @Test
    void argumentsAreCopiedAndResultsAreFresh() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            byte[] key = b("key");
            byte[] value = b("value");
            index.put(key, value);
            key[0] = 'X';
            value[0] = 'X';
            byte[] got = index.get(b("key"));
            assertArrayEquals(b("value"), got);
            got[0] = 'Y';
            assertArrayEquals(b("value"), index.get(b("key")));
            try (Cursor c = index.scan()) {
                assertTrue(c.next());
                c.key()[0] = 'Z';
                c.value()[0] = 'Z';
                assertArrayEquals(b("key"), c.key());
                assertArrayEquals(b("value"), c.value());
            }
            byte[] from = b("a");
            try (Cursor c = index.scan(from, null)) {
                from[0] = 'z'; // must not narrow the running scan
                assertTrue(c.next());
            }
        }
    }

    @Test
    void indexNamesAndShapesAreValidated() {
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
            assertThrows(IllegalArgumentException.class, () -> env.openIndex(""));
            assertThrows(IllegalArgumentException.class, () -> env.openIndex("x".repeat(256)));
            assertDoesNotThrow(() -> env.openIndex("x".repeat(255), IndexOptions.defaults().nodeSize(1 << 20)));
            // 4 MiB nodes set explicitly need 8 nodes = 32 MiB of cache; left unset, the node size adapts.
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> env.openIndex("big", IndexOptions.defaults().nodeSize(4 << 20)));
            assertTrue(e.getMessage().contains("nodeSize 4194304 needs a cache of at least 33554432 bytes"),
                    e.getMessage());
            assertDoesNotThrow(() -> env.openIndex("adapted").put(new byte[] {1}, new byte[] {2}));
            assertThrows(IllegalArgumentException.class,
                    () -> env.openIndex("shape", IndexOptions.defaults().nodeSize(64 << 10).basementSize(64 << 10)));
            assertFalse(env.indexNames().contains("big"), "a refused index must not be created");
            Index a = env.openIndex("same", IndexOptions.defaults().nodeSize(1 << 20));
            assertSame(a, env.openIndex("same", IndexOptions.defaults().nodeSize(1 << 20)));
        }
        assertThrows(IllegalArgumentException.class, () -> EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes((4L << 20) - 1));
        assertThrows(IllegalArgumentException.class, () -> IndexOptions.defaults().nodeSize((64 << 10) - 1));
        assertThrows(IllegalArgumentException.class, () -> IndexOptions.defaults().basementSize((4 << 10) - 1));
        assertThrows(IllegalArgumentException.class, () -> IndexOptions.defaults().fanout(3));
        assertThrows(IllegalArgumentException.class, () -> IndexOptions.defaults().codec(Codec.ZSTD, 99));
        assertEquals(Codec.XZ, Codec.byName("Xz"));
        assertThrows(IllegalArgumentException.class, () -> Codec.byName("snappy"));
    }

    // ----- close ----------------------------------------------------------------------------------

    @Test
    void everyCallAfterCloseIsAnIllegalStateException() {
        Environment env = Environment.open(dir);
        Index index = env.openIndex("i");
        for (int i = 0; i < 100; i++) {
            index.put(Dataset.longKey(i), b("v" + i));
        }
        Cursor open = index.scan();
        assertTrue(open.next());
        Cursor unstarted = index.scan();
        env.close();

        assertThrows(IllegalStateException.class, () -> index.put(b("k"), b("v")));
        assertThrows(IllegalStateException.class, () -> index.get(Dataset.longKey(1)));
        assertThrows(IllegalStateException.class, () -> index.delete(Dataset.longKey(1)));
        assertThrows(IllegalStateException.class, () -> index.scan());
        assertThrows(IllegalStateException.class, () -> index.scan(b("a"), b("b")));
        assertThrows(IllegalStateException.class, open::next);
        assertThrows(IllegalStateException.class, open::key);
        assertThrows(IllegalStateException.class, open::value);
        assertThrows(IllegalStateException.class, unstarted::next);
        assertThrows(IllegalStateException.class, () -> env.openIndex("i"));
        assertThrows(IllegalStateException.class, () -> env.openIndex("new"));
        assertThrows(IllegalStateException.class, env::checkpoint);
        assertThrows(IllegalStateException.class, env::indexNames);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> index.get(b("k")));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertDoesNotThrow(open::close);
        assertDoesNotThrow(env::close);
        assertDoesNotThrow(env::close);
        assertEquals(0, env.offHeapBytes(), "off-heap bytes still held after close");
    }

    @Test
    void closedCursorIsAnIllegalStateExceptionButCloseIsIdempotent() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            index.put(b("a"), b("1"));
            Cursor c = index.scan();
            assertThrows(IllegalStateException.class, c::key, "key() before next()");
            assertTrue(c.next());
            c.close();
            c.close();
            assertThrows(IllegalStateException.class, c::next);
            assertThrows(IllegalStateException.class, c::key);
            Cursor done = index.scan();
            assertTrue(done.next());
            assertFalse(done.next());
            assertThrows(IllegalStateException.class, done::key, "key() after the end");
            assertFalse(done.next(), "next() after the end stays false");
            done.close();
        }
    }

    // ----- one environment per directory ----------------------------------------------------------

    @Test
    void secondOpenInTheSameJvmIsRefusedUntilTheFirstCloses() throws Exception {
        Environment first = Environment.open(dir);
        try {
            BetreeException e = assertThrows(BetreeException.class, () -> Environment.open(dir));
            assertTrue(e.getMessage().contains("already open") && e.getMessage().contains(dir.toString()),
                    e.getMessage());
            // Another spelling of the same directory is the same directory.
            Path other = dir.resolve("sub").resolve("..");
            Files.createDirectories(dir.resolve("sub"));
            assertThrows(BetreeException.class, () -> Environment.open(other));
            Path link = dir.getParent().resolve(dir.getFileName() + "-link");
            try {
                Files.createSymbolicLink(link, dir);
                assertThrows(BetreeException.class, () -> Environment.open(link));
            } catch (UnsupportedOperationException | java.io.IOException noLinks) {
                // No symbolic links here; the path-spelling case above still ran.
            } finally {
                Files.deleteIfExists(link);
            }
            first.openIndex("i").put(b("k"), b("v")); // the first environment is unaffected
        } finally {
            first.close();
        }
        try (Environment again = Environment.open(dir)) {
            assertArrayEquals(b("v"), again.openIndex("i").get(b("k")));
        }
    }

    @Test
    void openInAnotherProcessIsRefusedWithAClearMessage() throws Exception {
        try (Environment env = Environment.open(dir)) {
            env.openIndex("i").put(b("k"), b("v"));
            env.checkpoint();
            ChildJvm.Result r = ChildJvm.run(TryOpen.class, List.of("-Xmx64m"), List.of(dir.toString()),
                    dir.getParent().resolve("child-" + System.nanoTime()), Duration.ofMinutes(1));
            String outcome = r.field("OUTCOME");
            System.out.println("open while another process holds it -> " + outcome);
            assertNotNull(outcome, r.describe());
            assertTrue(outcome.startsWith(DirectoryInUseException.class.getName() + " "), r.describe());
            assertTrue(outcome.contains("already open") && outcome.contains(dir.toString()), outcome);
            assertTrue(outcome.contains("pid " + ProcessHandle.current().pid()),
                    "the message should name the process holding the lock: " + outcome);
        }
        // Released at close: the other process can open it now.
        ChildJvm.Result r = ChildJvm.run(TryOpen.class, List.of("-Xmx64m"), List.of(dir.toString()),
                dir.getParent().resolve("child-" + System.nanoTime()), Duration.ofMinutes(1));
        assertEquals("opened [i]", r.field("OUTCOME"), r.describe());
    }

    /** Child-JVM program: tries to open {@code args[0]}; prints {@code OUTCOME opened <names>} or the error. */
    public static final class TryOpen {
        public static void main(String[] args) {
            try (Environment env = Environment.open(Path.of(args[0]),
                    EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
                System.out.println("OUTCOME opened " + env.indexNames());
            } catch (RuntimeException e) {
                System.out.println("OUTCOME " + e.getClass().getName() + " " + e.getMessage());
            }
        }
    }

    @Test
    void aCrashedProcessRecoversFromItsLastCheckpointAndTheLog() throws Exception {
        ChildJvm.Result r = ChildJvm.run(CrashAfterCheckpoint.class, List.of("-Xmx64m"), List.of(dir.toString()),
                dir.getParent().resolve("child-" + System.nanoTime()), Duration.ofMinutes(1));
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals("halting", r.field("STATE"), r.describe());
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            // Durability.NONE leaves syncing to checkpoints, but a process crash loses nothing the
            // operating system received: the log replays every write made after the checkpoint.
            for (int i = 0; i < 2000; i++) {
                assertArrayEquals(b("after the checkpoint " + i), index.get(Dataset.longKey(i)), "row " + i);
            }
        }
    }

    /** Child-JVM program: writes and checkpoints rows 0-999, then writes rows 0-1999 again and halts. */
    public static final class CrashAfterCheckpoint {
        public static void main(String[] args) {
            Environment env = Environment.open(Path.of(args[0]), EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(32L << 20));
            Index index = env.openIndex("i");
            for (int i = 0; i < 1000; i++) {
                index.put(Dataset.longKey(i), b("checkpointed " + i));
            }
            env.checkpoint();
            for (int i = 0; i < 2000; i++) {
                index.put(Dataset.longKey(i), b("after the checkpoint " + i));
            }
            System.out.println("STATE halting");
            System.out.flush();
            Runtime.getRuntime().halt(0); // no close, no shutdown hooks: as good as a crash
        }
    }

    // ----- cursors and key order ------------------------------------------------------------------

    @Test
    void cursorBounds() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i");
            for (String k : List.of("", "a", "ab", "abc", "abd", "ac", "b", "ba")) {
                index.put(b(k), b("value of " + k));
            }
            index.put(bytes('a', 'b', 0xff), b("ab\\xff"));
            assertEquals(List.of("", "a", "ab", "abc", "abd", "ab\u00ff", "ac", "b", "ba"), keysOf(index.scan()));
            assertEquals(keysOf(index.scan()), keysOf(index.scan(null, null)));
            assertEquals(keysOf(index.scan()), keysOf(index.scan(new byte[0], null)), "b\"\" is the smallest key");
            // Half-open ranges: from inclusive, to exclusive.
            assertEquals(List.of("ab", "abc", "abd", "ab\u00ff"), keysOf(index.scan(b("ab"), b("ac"))));
            assertEquals(List.of("abc", "abd", "ab\u00ff", "ac"), keysOf(index.scan(b("abc"), b("b"))));
            assertEquals(List.of("", "a", "ab"), keysOf(index.scan(null, b("abc"))));
            assertEquals(List.of("ba"), keysOf(index.scan(b("b\u0000"), null)));
            assertEquals(List.of("b", "ba"), keysOf(index.scan(b("az"), null)));
            // A prefix range [p, p+1): every key starting with "ab".
            assertEquals(List.of("ab", "abc", "abd", "ab\u00ff"), keysOf(index.scan(b("ab"), b("ac"))));
            // Empty ranges.
            assertEquals(List.of(), keysOf(index.scan(b("abc"), b("abc"))), "from == to");
            assertEquals(List.of(), keysOf(index.scan(b("b"), b("a"))), "from > to");
            assertEquals(List.of(), keysOf(index.scan(b("zzz"), null)), "from past the last key");
            assertEquals(List.of(), keysOf(index.scan(null, new byte[0])), "to == the smallest key");
            // The empty key is a key like any other.
            assertArrayEquals(b("value of "), index.get(new byte[0]));
            index.delete(new byte[0]);
            assertNull(index.get(new byte[0]));
            assertEquals("a", keysOf(index.scan()).get(0));
        }
    }

    @Test
    void keysSortAsUnsignedBytes() {
        try (Environment env = Environment.open(dir)) {
            Index index = env.openIndex("i", Dataset.smallNodes(Codec.LZ4));
            List<byte[]> keys = new ArrayList<>();
            for (int first = 0; first < 256; first++) {
                keys.add(bytes(first));
                keys.add(bytes(first, 0x80));
                keys.add(bytes(first, 0x7f));
            }
            java.util.Collections.shuffle(keys, new Random(3));
            for (byte[] k : keys) {
                index.put(k, k);
            }
            keys.sort(Arrays::compareUnsigned);
            List<byte[]> scanned = new ArrayList<>();
            try (Cursor c = index.scan()) {
                while (c.next()) {
                    scanned.add(c.key());
                }
            }
            assertEquals(keys.size(), scanned.size());
            for (int i = 0; i < keys.size(); i++) {
                assertArrayEquals(keys.get(i), scanned.get(i), "position " + i);
            }
            // 0x80 sorts after 0x7f (a signed comparison would put it first).
            List<String> around = new ArrayList<>();
            try (Cursor c = index.scan(bytes(0x7f), bytes(0x81))) {
                while (c.next()) {
                    around.add(java.util.HexFormat.of().formatHex(c.key()));
                }
            }
            assertEquals(List.of("7f", "7f7f", "7f80", "80", "807f", "8080"), around);
            assertEquals("ff80", java.util.HexFormat.of().formatHex(scanned.get(scanned.size() - 1)));
        }
    }

    // ----- durability and codecs ------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Codec.class)
    void dataSurvivesReopenWithEveryCodec(Codec codec) {
        NavigableMap<byte[], byte[]> expected = new TreeMap<>(Arrays::compareUnsigned);
        Random random = new Random(codec.ordinal());
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
            Index index = env.openIndex("c", Dataset.smallNodes(codec));
            for (int i = 0; i < 3_000; i++) {
                byte[] k = Dataset.key(random);
                byte[] v = Dataset.value(random);
                index.put(k, v);
                expected.put(k, v);
            }
        }
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
            assertContents(expected, env.openIndex("c", Dataset.smallNodes(codec)));
        }
    }

    @Test
    void codecCanChangeBetweenOpensAndOldBlocksStayReadable() {
        NavigableMap<byte[], byte[]> expected = new TreeMap<>(Arrays::compareUnsigned);
        Random random = new Random(11);
        List<Codec> sequence = List.of(Codec.NONE, Codec.LZ4, Codec.ZSTD, Codec.XZ, Codec.DEFLATE, Codec.NONE);
        for (Codec codec : sequence) {
            try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
                Index index = env.openIndex("c", Dataset.smallNodes(codec));
                assertContents(expected, index); // blocks written by every earlier codec
                for (int i = 0; i < 800; i++) {
                    byte[] k = Dataset.key(random);
                    byte[] v = Dataset.value(random);
                    index.put(k, v);
                    expected.put(k, v);
                }
                // Rewrite a slice of old rows too, so that blocks of different codecs mix in one tree.
                int n = 0;
                for (Map.Entry<byte[], byte[]> e : expected.entrySet()) {
                    if (n++ % 9 == 0) {
                        byte[] v = (codec + " " + n).getBytes(StandardCharsets.UTF_8);
                        index.put(e.getKey(), v);
                        e.setValue(v);
                    }
                }
            }
        }
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(16L << 20))) {
            assertContents(expected, env.openIndex("c", Dataset.smallNodes(Codec.ZSTD)));
        }
    }

    static void assertContents(NavigableMap<byte[], byte[]> expected, Index index) {
        for (Map.Entry<byte[], byte[]> e : expected.entrySet()) {
            assertArrayEquals(e.getValue(), index.get(e.getKey()), () -> "get " + Dataset.hex(e.getKey()));
        }
        try (Cursor c = index.scan()) {
            for (Map.Entry<byte[], byte[]> e : expected.entrySet()) {
                assertTrue(c.next(), "scan ended early");
                assertArrayEquals(e.getKey(), c.key());
                assertArrayEquals(e.getValue(), c.value());
            }
            assertFalse(c.next(), "scan returned extra rows");
        }
    }

    @Test
    void indexNamesAreSortedAndSurviveReopen() {
        try (Environment env = Environment.open(dir)) {
            assertEquals(List.of(), env.indexNames());
            env.openIndex("orders").put(b("1"), b("x"));
            env.openIndex("customers");
            env.openIndex("Ärger"); // non-ASCII names are fine
            env.openIndex("a-empty-one");
            assertEquals(List.of("Ärger", "a-empty-one", "customers", "orders").stream().sorted().toList(),
                    env.indexNames());
        }
        try (Environment env = Environment.open(dir)) {
            assertEquals(List.of("Ärger", "a-empty-one", "customers", "orders").stream().sorted().toList(),
                    env.indexNames(), "indexes created in an earlier session, empty ones included");
            assertArrayEquals(b("x"), env.openIndex("orders").get(b("1")));
            env.openIndex("zeta");
            assertTrue(env.indexNames().contains("zeta"), "an index opened in this session is listed at once");
        }
        try (Environment env = Environment.open(dir)) {
            assertEquals(5, env.indexNames().size());
        }
    }
}
