package io.betree.internal.storage;

import io.betree.internal.fault.CorruptionException;
import io.betree.compression.BlockCompressor;
import io.betree.compression.CompressionFormatException;
import io.betree.compression.Compressors;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.function.IntFunction;

/**
 * Turns a block's payload into its stored form (header, then the payload compressed or raw) and a
 * verified stored form back into the payload. The header layout and checks are {@link BlockHeader}'s.
 */
final class BlockEncoding {

    private BlockEncoding() {
    }

    /**
     * Builds the stored form of a block in {@code block}: header, then the payload compressed, or
     * raw if compression does not make it smaller.
     *
     * @return the on-disk length; {@code block} is set to [0, length)
     */
    static int encode(ByteBuffer block, long blockNumber, ByteBuffer payload, BlockCompressor codec,
            int bound) {
        int length = payload.remaining();
        int codecId = codec.id();
        int stored = -1;
        if (codecId != 0 && length > 0) {
            ByteBuffer dst = block.duplicate().limit(BlockHeader.SIZE + bound).position(BlockHeader.SIZE);
            stored = codec.compress(payload.duplicate(), dst);
        }
        if (stored < 0 || stored >= length) {
            block.position(BlockHeader.SIZE).put(payload.duplicate());
            stored = length;
            codecId = 0;
        }
        BlockHeader.write(block, codecId, blockNumber, length, stored);
        int diskLength = BlockHeader.SIZE + stored;
        block.limit(diskLength).position(0);
        return diskLength;
    }

    /**
     * Decompresses a verified block held in {@code raw} into {@code allocator.apply(uncompressedLength)}.
     *
     * @return the allocator's buffer, flipped
     * @throws CorruptionException if the codec rejects the payload or is unknown
     */
    static ByteBuffer decode(Path path, long blockNumber, long offset, ByteBuffer raw, BlockHeader.Fields fields,
            IntFunction<ByteBuffer> allocator) {
        int length = fields.uncompressedLength();
        ByteBuffer out = allocator.apply(length);
        if (out == null || out.remaining() < length) {
            throw new IllegalStateException("allocator returned " + out + " for a block of " + length + " bytes");
        }
        ByteBuffer src = raw.duplicate().limit(BlockHeader.SIZE + fields.storedLength()).position(BlockHeader.SIZE);
        int start = out.position();
        try {
            if (fields.codecId() == 0) {
                out.put(src);
            } else {
                Compressors.forId(fields.codecId()).decompress(src, out, length);
            }
        } catch (CompressionFormatException e) {
            throw new CorruptionException(path, blockNumber, offset,
                    "cannot decompress (codec " + fields.codecId() + "): " + e.getMessage(), e);
        }
        if (out.position() - start != length) {
            throw new CorruptionException(path, blockNumber, offset, "codec " + fields.codecId() + " produced "
                    + (out.position() - start) + " bytes instead of " + length);
        }
        return out.flip();
    }
}
