package io.betree.systest;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

/**
 * A deterministic multi-index data set and its expected contents: rows written in random key
 * order (so that messages wait in internal nodes' buffers), some overwritten, some deleted, with
 * small nodes so that the data file holds many blocks. {@link #verify} reads everything back.
 */
final class Dataset {
    /** Small nodes: many blocks, several tree levels, evictions even with a modest cache. */
    static IndexOptions smallNodes(Codec codec) {
        return IndexOptions.defaults().codec(codec).nodeSize(64 << 10).basementSize(8 << 10);
    }

    final long seed;
    /** Index name to its options, in creation order. */
    final Map<String, IndexOptions> indexes = new LinkedHashMap<>();
    /** Index name to its expected contents (unsigned key order). */
    final Map<String, NavigableMap<byte[], byte[]>> expected = new LinkedHashMap<>();
    /** Index name to keys that were written and then deleted. */
    final Map<String, List<byte[]>> deleted = new LinkedHashMap<>();

    private Dataset(long seed) {
        this.seed = seed;
        indexes.put("plain", smallNodes(Codec.NONE));
        indexes.put("fast", smallNodes(Codec.LZ4));
        indexes.put("dense", smallNodes(Codec.ZSTD));
        for (String name : indexes.keySet()) {
            expected.put(name, new TreeMap<>(Arrays::compareUnsigned));
            deleted.put(name, new ArrayList<>());
        }
    }

    /**
     * Creates the environment in {@code dir} holding about {@code rows} live rows spread over three
     * indexes (codecs NONE, LZ4, ZSTD), ends with an explicit checkpoint and then closes (which
     * checkpoints again without changes, so both header slots describe the same contents).
     */
    static Dataset create(Path dir, long seed, int rows, long cacheBytes) {
        Dataset d = new Dataset(seed);
        Random random = new Random(seed);
        List<String> names = new ArrayList<>(d.indexes.keySet());
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(cacheBytes))) {
            List<Index> handles = new ArrayList<>();
            for (String name : names) {
                handles.add(env.openIndex(name, d.indexes.get(name)));
            }
            for (int i = 0; i < rows; i++) {
                int which = i % names.size();
                byte[] key = key(random);
                byte[] value = value(random);
                handles.get(which).put(key, value);
                d.expected.get(names.get(which)).put(key, value);
                if (i % 10 == 9) { // overwrite an earlier key
                    NavigableMap<byte[], byte[]> m = d.expected.get(names.get(which));
                    byte[] k = m.ceilingKey(key(random));
                    if (k != null) {
                        byte[] v = value(random);
                        handles.get(which).put(k, v);
                        m.put(k, v);
                    }
                }
                if (i % 20 == 19) { // delete an earlier key
                    NavigableMap<byte[], byte[]> m = d.expected.get(names.get(which));
                    byte[] k = m.ceilingKey(key(random));
                    if (k != null) {
                        handles.get(which).delete(k);
                        m.remove(k);
                        d.deleted.get(names.get(which)).add(k);
                    }
                }
            }
            env.checkpoint();
        }
        return d;
    }

    /** Keys of 4 to 24 bytes starting with 8 random bytes, so they spread over the key space. */
    static byte[] key(Random random) {
        byte[] k = new byte[8 + random.nextInt(17)];
        random.nextBytes(k);
        return k;
    }

    /** Values of 20 to 250 bytes, half random and half a repeated byte, so codecs have work to do. */
    static byte[] value(Random random) {
        byte[] v = new byte[20 + random.nextInt(231)];
        int half = v.length / 2;
        byte[] noise = new byte[half];
        random.nextBytes(noise);
        System.arraycopy(noise, 0, v, 0, half);
        Arrays.fill(v, half, v.length, (byte) random.nextInt());
        return v;
    }

    int rowCount() {
        return expected.values().stream().mapToInt(Map::size).sum();
    }

    /**
     * Opens every index of {@code env} and checks that it holds exactly the expected contents: the
     * list of index names, a get of every key (and of every deleted key), and a full scan.
     *
     * @throws AssertionError naming the index and key on any difference
     */
    void verify(Environment env) {
        List<String> names = env.indexNames();
        if (!names.equals(new ArrayList<>(new TreeMap<>(expected).keySet()))) {
            throw new AssertionError("index names " + names + ", expected " + new TreeMap<>(expected).keySet());
        }
        for (Map.Entry<String, NavigableMap<byte[], byte[]>> e : expected.entrySet()) {
            Index index = env.openIndex(e.getKey(), indexes.get(e.getKey()));
            NavigableMap<byte[], byte[]> rows = e.getValue();
            for (Map.Entry<byte[], byte[]> row : rows.entrySet()) {
                byte[] actual = index.get(row.getKey());
                if (!Arrays.equals(actual, row.getValue())) {
                    throw new AssertionError("index " + e.getKey() + ": get(" + hex(row.getKey()) + ") returned "
                            + (actual == null ? "null" : hex(actual)) + ", expected " + hex(row.getValue()));
                }
            }
            for (byte[] k : deleted.get(e.getKey())) {
                if (!rows.containsKey(k) && index.get(k) != null) {
                    throw new AssertionError("index " + e.getKey() + ": deleted key " + hex(k) + " is back");
                }
            }
            long seen = 0;
            try (Cursor c = index.scan()) {
                var it = rows.entrySet().iterator();
                while (c.next()) {
                    seen++;
                    if (!it.hasNext()) {
                        throw new AssertionError("index " + e.getKey() + ": scan returned extra key " + hex(c.key())
                                + " after " + (seen - 1) + " rows");
                    }
                    Map.Entry<byte[], byte[]> want = it.next();
                    if (!Arrays.equals(c.key(), want.getKey()) || !Arrays.equals(c.value(), want.getValue())) {
                        throw new AssertionError("index " + e.getKey() + ": scan row " + (seen - 1) + " is "
                                + hex(c.key()) + ", expected " + hex(want.getKey()) + " (or its value differs)");
                    }
                }
                if (it.hasNext()) {
                    throw new AssertionError("index " + e.getKey() + ": scan ended after " + seen + " rows, expected "
                            + rows.size());
                }
            }
        }
    }

    static String hex(byte[] b) {
        String h = HexFormat.of().formatHex(b, 0, Math.min(b.length, 32));
        return b.length > 32 ? h + "...(" + b.length + " bytes)" : h;
    }

    static byte[] longKey(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }
}
