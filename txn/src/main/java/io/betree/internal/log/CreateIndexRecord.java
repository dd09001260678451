package io.betree.internal.log;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Payload of a {@link LogRecordType#CREATE_INDEX} record: an index created since the last checkpoint,
 * with the settings recovery needs to recreate it before replaying commits that write to it.
 *
 * <p>Encoding (big-endian): index id (4), name length (2) and UTF-8 name, codec name length (1) and
 * UTF-8 codec name, codec level (4), node size (4), basement size (4), fanout (4).
 *
 * @param indexId the new index's id
 * @param name the index name (at most 65535 UTF-8 bytes)
 * @param codec the compression codec's name (at most 255 UTF-8 bytes)
 * @param level the codec level
 * @param nodeSize the node size in bytes
 * @param basementSize the basement size in bytes
 * @param fanout the maximum fanout of internal nodes
 */
public record CreateIndexRecord(int indexId, String name, String codec, int level, int nodeSize, int basementSize,
        int fanout) implements LogPayload {

    private static final int MAX_NAME_BYTES = 0xffff;
    private static final int MAX_CODEC_BYTES = 0xff;

    /** Checks that the strings are present and short enough to encode. */
    public CreateIndexRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(codec, "codec");
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("index name longer than " + MAX_NAME_BYTES + " UTF-8 bytes");
        }
        if (codec.getBytes(StandardCharsets.UTF_8).length > MAX_CODEC_BYTES) {
            throw new IllegalArgumentException("codec name longer than " + MAX_CODEC_BYTES + " UTF-8 bytes");
        }
    }

    @Override
    public LogRecordType type() {
        return LogRecordType.CREATE_INDEX;
    }

    @Override
    public ByteBuffer encode() {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] c = codec.getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate(4 + 2 + n.length + 1 + c.length + 16);
        out.putInt(indexId).putShort((short) n.length).put(n).put((byte) c.length).put(c);
        out.putInt(level).putInt(nodeSize).putInt(basementSize).putInt(fanout);
        return out.flip();
    }

    /**
     * Decodes the remaining bytes of {@code payload} without moving its position.
     *
     * @throws IllegalArgumentException if the bytes are not exactly one well-formed record
     */
    public static CreateIndexRecord decode(ByteBuffer payload) {
        PayloadReader in = new PayloadReader(payload, "create-index");
        int id = in.i32("index id");
        String name = in.utf8(in.u16("name length"), "name");
        String codec = in.utf8(in.u8("codec length"), "codec");
        int level = in.i32("level");
        int nodeSize = in.i32("node size");
        int basementSize = in.i32("basement size");
        int fanout = in.i32("fanout");
        in.end();
        return new CreateIndexRecord(id, name, codec, level, nodeSize, basementSize, fanout);
    }

    @Override
    public String describe() {
        return "index=" + indexId + " name=\"" + name + "\" codec=" + codec + " level=" + level + " nodeSize="
                + nodeSize + " basementSize=" + basementSize + " fanout=" + fanout;
    }
}
