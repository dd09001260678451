package io.betree.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Codec;
import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import io.betree.bench.engine.EngineSettings;
import io.betree.bench.engine.Updates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every adapter gives the same answers to the same operations, so the workloads compare like with like. */
class EngineAdapterContractTest {
    private static final EngineSettings SETTINGS = new EngineSettings(32L << 20, Codec.NONE, false);

    @TempDir
    Path dir;

    private static byte[] b(int... v) {
        byte[] out = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (byte) v[i];
        }
        return out;
    }

    private static List<String> scan(Table t, byte[] from, byte[] to, long limit) {
        List<String> out = new ArrayList<>();
        long n = t.scan(from, to, limit, (k, v) -> out.add(hex(k) + "=" + hex(v)));
        assertEquals(out.size(), n);
        return out;
    }

    private static String hex(byte[] a) {
        StringBuilder s = new StringBuilder();
        for (byte x : a) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void sameAnswersOnEveryEngine(String engine) {
        EngineAdapter e = EngineAdapter.create(engine);
        assertEquals(engine, e.name());
        e.open(dir, SETTINGS);
        Table a = e.table("a");
        Table other = e.table("other");
        a.put(b(0x10), b(1));
        a.put(b(0x80), b(2));
        a.put(b(0x7f), b(3));
        a.put(b(0x10, 0x00), new byte[0]);
        a.put(b(0x20), b(4));
        other.put(b(0x10), b(9));
        e.commit();
        a.put(b(0x20), b(5));
        a.delete(b(0x7f));
        a.delete(b(0x55));
        e.commit();
        assertArrayEquals(b(1), a.get(b(0x10)));
        assertArrayEquals(new byte[0], a.get(b(0x10, 0x00)));
        assertArrayEquals(b(5), a.get(b(0x20)));
        assertNull(a.get(b(0x7f)));
        assertNull(a.get(b(0x11)));
        assertArrayEquals(b(9), other.get(b(0x10)));
        assertEquals(List.of("10=01", "1000=", "20=05", "80=02"), scan(a, null, null, Long.MAX_VALUE));
        assertEquals(List.of("1000=", "20=05"), scan(a, b(0x10, 0x00), b(0x80), Long.MAX_VALUE));
        assertEquals(List.of("20=05"), scan(a, b(0x11), null, 1));
        assertEquals(List.of(), scan(a, b(0x81), null, 10));
        e.flush();
        assertTrue(e.diskBytes() > 0);
        e.close();
        e.close();
        e.open(dir, SETTINGS);
        Table again = e.table("a");
        assertEquals(List.of("10=01", "1000=", "20=05", "80=02"), scan(again, null, null, Long.MAX_VALUE));
        assertArrayEquals(b(9), e.table("other").get(b(0x10)));
        assertThrows(IllegalStateException.class, () -> e.open(dir, SETTINGS));
        e.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void manyRowsInBatches(String engine) {
        EngineAdapter e = EngineAdapter.create(engine);
        Codec codec = e.supports(Codec.LZ4) ? Codec.LZ4 : Codec.NONE;
        e.open(dir, new EngineSettings(32L << 20, codec, false));
        Table t = e.table("t");
        for (int i = 0; i < 50_000; i++) {
            t.put(java.nio.ByteBuffer.allocate(4).putInt(i).array(), ("value-" + i).getBytes());
            if (i % 1000 == 999) {
                e.commit();
            }
        }
        e.commit();
        for (int i = 0; i < 50_000; i += 2) {
            t.delete(java.nio.ByteBuffer.allocate(4).putInt(i).array());
        }
        e.commit();
        long[] n = new long[1];
        t.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            int id = java.nio.ByteBuffer.wrap(k).getInt();
            assertEquals(1, id % 2);
            assertArrayEquals(("value-" + id).getBytes(), v);
            n[0]++;
        });
        assertEquals(25_000, n[0]);
        e.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void writerThreadsHaveABatchEach(String engine) throws Exception {
        EngineAdapter e = EngineAdapter.create(engine);
        e.open(dir, SETTINGS);
        Table t = e.table("t");
        int threads = 4;
        int batches = 20;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                int writer = w;
                futures.add(pool.submit(() -> {
                    for (int b = 0; b < batches; b++) {
                        for (int i = 0; i < 100; i++) {
                            t.put(java.nio.ByteBuffer.allocate(12).putInt(i).putInt(b).putInt(writer).array(),
                                    b(writer, b, i));
                        }
                        e.commit();
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        long[] n = new long[1];
        t.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            java.nio.ByteBuffer key = java.nio.ByteBuffer.wrap(k);
            int i = key.getInt();
            int b = key.getInt();
            assertArrayEquals(b(key.getInt(), b, i), v);
            n[0]++;
        });
        assertEquals((long) threads * batches * 100, n[0]);
        e.close();
    }

    /**
     * Counter increments add up in either engine's encoding, absent counting as 0, across commits
     * and a reopen; a field write changes just the field and leaves absent keys absent; a
     * read-modify-write batch reads the committed value.
     */
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb"})
    void updatesOfCountersAndFields(String engine) {
        EngineAdapter e = EngineAdapter.create(engine);
        e.open(dir, SETTINGS);
        Updates u = e.updates();
        assertNotNull(u);
        Table t = e.table("t");
        t.put(b(1), u.encodeCounter(40));
        e.commit();
        u.addToCounter(t, b(1), 2);
        u.addToCounter(t, b(2), 5);
        e.commit();
        u.addToCounter(t, b(2), -1);
        e.commit();
        assertEquals(42, u.decodeCounter(t.get(b(1))));
        assertEquals(4, u.decodeCounter(t.get(b(2))));
        assertEquals(0, u.decodeCounter(t.get(b(3))));
        assertArrayEquals(u.encodeCounter(42), t.get(b(1)));
        assertEquals(0, u.inBatch(() -> t.put(b(1), u.encodeCounter(u.decodeCounter(u.readInBatch(t, b(1))) + 1))));
        assertEquals(43, u.decodeCounter(t.get(b(1))));
        if (u.hasBlindFieldWrite()) {
            t.put(b(9), b(1, 2, 3, 4, 5, 6));
            e.commit();
            u.setField(t, b(9), 2, b(7, 8));
            u.setField(t, b(10), 0, b(7));
            e.commit();
            assertArrayEquals(b(1, 2, 7, 8, 5, 6), t.get(b(9)));
            assertNull(t.get(b(10)));
        } else {
            assertThrows(UnsupportedOperationException.class, () -> u.setField(t, b(9), 0, b(7)));
        }
        e.close();
        e.open(dir, SETTINGS);
        Table again = e.table("t");
        assertEquals(43, e.updates().decodeCounter(again.get(b(1))));
        assertEquals(4, e.updates().decodeCounter(again.get(b(2))));
        e.close();
    }

    /** betree's read-modify-write batches isolate, so concurrent increments of a few counters all count. */
    @org.junit.jupiter.api.Test
    void betreeReadModifyWriteRetriesConflicts() throws Exception {
        EngineAdapter e = EngineAdapter.create("betree");
        e.open(dir, SETTINGS);
        Updates u = e.updates();
        assertTrue(u.isolatedReadModifyWrite());
        Table t = e.table("t");
        int threads = 4;
        int perThread = 300;
        long[] retries = new long[threads];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                int writer = w;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        byte[] k = b(i % 3);
                        retries[writer] += u.inBatch(() -> t.put(k,
                                u.encodeCounter(u.decodeCounter(u.readInBatch(t, k)) + 1)));
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        long sum = 0;
        for (int k = 0; k < 3; k++) {
            sum += u.decodeCounter(t.get(b(k)));
        }
        assertEquals((long) threads * perThread, sum);
        e.close();
    }

    /**
     * A range delete removes exactly the keys of its range, committed on return, in both engines;
     * betree's broadcast appends its argument to every row there is, and to no key absent.
     */
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb"})
    void rangeDeletesAndBroadcasts(String engine) {
        EngineAdapter e = EngineAdapter.create(engine);
        e.open(dir, SETTINGS);
        Updates u = e.updates();
        Table t = e.table("t");
        Table other = e.table("other");
        for (int k = 1; k <= 6; k++) {
            t.put(b(k), b(k, k));
            other.put(b(k), b(k));
        }
        e.commit();
        u.deleteRange(t, b(2), b(4));
        assertEquals(List.of("01=0101", "04=0404", "05=0505", "06=0606"), scan(t, null, null, 100));
        assertNull(t.get(b(3)));
        u.deleteRange(t, null, b(5));
        assertEquals(List.of("05=0505", "06=0606"), scan(t, null, null, 100));
        assertEquals(6, scan(other, null, null, 100).size());
        if (u.hasBroadcast()) {
            u.appendToAll(t, b(9, 8));
            assertEquals(List.of("05=05050908", "06=06060908"), scan(t, null, null, 100));
            assertNull(t.get(b(1)));
            assertArrayEquals(b(6, 6, 9, 8), t.get(b(6)));
            assertArrayEquals(b(6), other.get(b(6)));
        } else {
            assertThrows(UnsupportedOperationException.class, () -> u.appendToAll(t, b(9, 8)));
        }
        e.close();
        e.open(dir, SETTINGS);
        assertEquals(u.hasBroadcast() ? List.of("05=05050908", "06=06060908") : List.of("05=0505", "06=0606"),
                scan(e.table("t"), null, null, 100));
        e.close();
    }

    @org.junit.jupiter.api.Test
    void lmdbHasNoUpdatesAndRocksDbNoIsolation() {
        assertNull(EngineAdapter.create("lmdb").updates());
        assertFalse(EngineAdapter.create("rocksdb").updates().isolatedReadModifyWrite());
        assertFalse(EngineAdapter.create("rocksdb").updates().hasBlindFieldWrite());
        assertFalse(EngineAdapter.create("rocksdb").updates().hasBroadcast());
        assertTrue(EngineAdapter.create("betree").updates().hasBroadcast());
    }
}
