package io.betree.internal.engine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The environment's catalog, stored as the block file's root record at every checkpoint: the
 * newest commit timestamp the checkpoint contains, the log position recovery starts from, the
 * next index id, and per index its id, name, root block and settings. Format (big endian): magic
 * "BTCT", version (4), last timestamp (8), checkpoint LSN (8), next index id (4), index count (4),
 * then per index: id (4), name length (2) and UTF-8 name, root block (8), codec name length (1)
 * and ASCII name, codec level (4), node size (4), basement size (4), fanout (4), and from version 2
 * the update functions its messages ever named: count (2), then per name its length (1) and UTF-8
 * bytes. A version 1 catalog, written before names were recorded, is read as naming none.
 */
public final class Catalog {
    private static final int MAGIC = 0x42544354;
    private static final int VERSION = 2;

    /** One index's entry; {@code functions} are the update functions its messages ever named. */
    public record Entry(int id, String name, long rootBlock, String codec, int level, int nodeSize, int basementSize,
            int fanout, List<String> functions) {
    }

    /** A catalog's contents. */
    public record Contents(long lastTs, long checkpointLsn, int nextIndexId, List<Entry> entries) {
    }

    private Catalog() {
    }

    /** Serializes {@code c}. */
    public static ByteBuffer write(Contents c) {
        int size = 32;
        for (Entry e : c.entries()) {
            size += 4 + 2 + e.name().getBytes(StandardCharsets.UTF_8).length + 8 + 1 + e.codec().length() + 16 + 2;
            for (String f : e.functions()) {
                size += 1 + f.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.putInt(MAGIC).putInt(VERSION).putLong(c.lastTs()).putLong(c.checkpointLsn()).putInt(c.nextIndexId());
        out.putInt(c.entries().size());
        for (Entry e : c.entries()) {
            byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
            byte[] codec = e.codec().getBytes(StandardCharsets.US_ASCII);
            out.putInt(e.id()).putShort((short) name.length).put(name).putLong(e.rootBlock());
            out.put((byte) codec.length).put(codec);
            out.putInt(e.level()).putInt(e.nodeSize()).putInt(e.basementSize()).putInt(e.fanout());
            out.putShort((short) e.functions().size());
            for (String f : e.functions()) {
                byte[] b = f.getBytes(StandardCharsets.UTF_8);
                out.put((byte) b.length).put(b);
            }
        }
        return out.flip();
    }

    /**
     * Parses a stored catalog.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed catalog
     */
    public static Contents read(ByteBuffer in) {
        try {
            if (in.getInt() != MAGIC) {
                throw new IllegalArgumentException("catalog has a bad magic number");
            }
            int version = in.getInt();
            if (version != 1 && version != VERSION) {
                throw new IllegalArgumentException("catalog version " + version + " is not supported");
            }
            long lastTs = in.getLong();
            long checkpointLsn = in.getLong();
            int nextId = in.getInt();
            int n = in.getInt();
            if (n < 0 || n > in.remaining() / 24) {
                throw new IllegalArgumentException("impossible index count " + n);
            }
            List<Entry> entries = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int id = in.getInt();
                byte[] name = new byte[in.getShort() & 0xffff];
                in.get(name);
                long root = in.getLong();
                byte[] codec = new byte[in.get() & 0xff];
                in.get(codec);
                String codecName = new String(codec, StandardCharsets.US_ASCII);
                int level = in.getInt();
                int nodeSize = in.getInt();
                int basementSize = in.getInt();
                int fanout = in.getInt();
                List<String> functions = new ArrayList<>();
                for (int f = version == 1 ? 0 : in.getShort() & 0xffff; f > 0; f--) {
                    byte[] fn = new byte[in.get() & 0xff];
                    in.get(fn);
                    functions.add(new String(fn, StandardCharsets.UTF_8));
                }
                entries.add(new Entry(id, new String(name, StandardCharsets.UTF_8), root, codecName, level, nodeSize,
                        basementSize, fanout, List.copyOf(functions)));
            }
            return new Contents(lastTs, checkpointLsn, nextId, entries);
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("catalog is truncated", e);
        }
    }
}
