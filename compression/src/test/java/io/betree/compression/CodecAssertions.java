package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;

/**
 * Assertions about single compress and decompress calls: return values, position updates, guard
 * bytes and the handling of malformed input.
 */
public final class CodecAssertions {

    private CodecAssertions() {
    }

    /**
     * Compresses {@code data} from a {@code srcKind} buffer into a {@code dstKind} buffer with
     * {@code room} bytes remaining and returns the block, checking positions and guard bytes.
     */
    public static byte[] compress(BlockCompressor c, byte[] data, BufferKind srcKind, BufferKind dstKind, int room) {
        ByteBuffer src = srcKind.holding(data);
        ByteBuffer dst = dstKind.withRoom(room);
        int srcPos = src.position();
        int dstPos = dst.position();
        int written = c.compress(src, dst);
        String what = c + " compress " + srcKind + "->" + dstKind;
        assertEquals(srcPos + data.length, src.position(), what + ": source position");
        assertEquals(src.limit(), src.position(), what + ": source not consumed");
        assertEquals(dstPos + written, dst.position(), what + ": destination position");
        assertTrue(written <= c.maxCompressedLength(data.length), what + ": bound exceeded");
        BufferKind.assertGuardsIntact(dst, dstPos + room, what);
        byte[] block = new byte[written];
        dst.get(dstPos, block);
        return block;
    }

    /**
     * Decompresses {@code block} from a {@code srcKind} buffer into a {@code dstKind} buffer with
     * {@code room} bytes remaining and returns the output, checking positions and that nothing
     * beyond {@code originalLength} bytes was written.
     */
    public static byte[] decompress(BlockCompressor c, byte[] block, int originalLength,
            BufferKind srcKind, BufferKind dstKind, int room) {
        ByteBuffer src = srcKind.holding(block);
        ByteBuffer dst = dstKind.withRoom(room);
        int dstPos = dst.position();
        c.decompress(src, dst, originalLength);
        String what = c + " decompress " + srcKind + "->" + dstKind;
        assertEquals(src.limit(), src.position(), what + ": source not consumed");
        assertEquals(dstPos + originalLength, dst.position(), what + ": destination position");
        BufferKind.assertGuardsIntact(dst, dstPos + room, what);
        for (int i = dstPos + originalLength; i < dstPos + room; i++) {
            assertEquals(BufferKind.GUARD, dst.get(i), what + ": wrote beyond the original length at " + i);
        }
        byte[] out = new byte[originalLength];
        dst.get(dstPos, out);
        return out;
    }

    /** Round-trips {@code data} with exactly-sized destinations; returns the compressed block. */
    public static byte[] assertRoundTrip(BlockCompressor c, byte[] data, BufferKind srcKind, BufferKind dstKind) {
        byte[] block = compress(c, data, srcKind, dstKind, c.maxCompressedLength(data.length));
        byte[] out = decompress(c, block, data.length, srcKind, dstKind, data.length);
        assertArrayEquals(data, out, c + ": round trip " + srcKind + "->" + dstKind + " of " + data.length + " bytes");
        return block;
    }

    /** Asserts that decompressing {@code input} throws {@link CompressionFormatException} and moves nothing. */
    public static void assertRejected(BlockCompressor c, byte[] input, int originalLength, BufferKind kind, String what) {
        ByteBuffer src = kind.holding(input);
        ByteBuffer dst = kind.withRoom(originalLength);
        int srcPos = src.position();
        int dstPos = dst.position();
        assertThrows(CompressionFormatException.class, () -> c.decompress(src, dst, originalLength),
                () -> c + ": " + what + " was accepted");
        assertEquals(srcPos, src.position(), what + ": source position moved on failure");
        assertEquals(dstPos, dst.position(), what + ": destination position moved on failure");
        BufferKind.assertGuardsIntact(dst, dstPos + originalLength, c + ": " + what);
    }

    /**
     * Decompresses malformed {@code input}: it must throw {@link CompressionFormatException} or
     * return normally, and any other outcome fails the test. When {@code checksummed} an accepted
     * input must reproduce {@code expected}; a {@code null} expected means it must be rejected.
     */
    public static void assertRejectedOrTolerated(BlockCompressor c, byte[] input, int originalLength,
            byte[] expected, boolean checksummed, BufferKind kind, String what) {
        ByteBuffer src = kind.holding(input);
        ByteBuffer dst = kind.withRoom(originalLength);
        int srcPos = src.position();
        int dstPos = dst.position();
        try {
            c.decompress(src, dst, originalLength);
        } catch (CompressionFormatException e) {
            assertEquals(srcPos, src.position(), what + ": source position moved on failure");
            assertEquals(dstPos, dst.position(), what + ": destination position moved on failure");
            BufferKind.assertGuardsIntact(dst, dstPos + originalLength, c + ": " + what);
            return;
        }
        assertEquals(src.limit(), src.position(), what + ": accepted but source not consumed");
        assertEquals(dstPos + originalLength, dst.position(), what + ": accepted with wrong destination position");
        BufferKind.assertGuardsIntact(dst, dstPos + originalLength, c + ": " + what);
        if (checksummed) {
            if (expected == null) {
                fail(c + ": " + what + " was accepted although the format is checksummed");
            }
            byte[] out = new byte[originalLength];
            dst.get(dstPos, out);
            assertArrayEquals(expected, out, c + ": " + what + " silently produced different bytes");
        }
    }
}
