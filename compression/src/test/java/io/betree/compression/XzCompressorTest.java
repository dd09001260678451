package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.MemoryLimitException;
import org.tukaani.xz.XZ;
import org.tukaani.xz.XZOutputStream;

/** xz-specific behaviour: the decoder memory limit and streams written by a stock encoder. */
class XzCompressorTest {

    private static byte[] stockStream(byte[] data, LZMA2Options options, int check) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (XZOutputStream out = new XZOutputStream(bytes, options, check)) {
            out.write(data);
        }
        return bytes.toByteArray();
    }

    @Test
    void rejectsStreamsAnnouncingHugeDictionaries() {
        XzCompressor c = new XzCompressor(0);
        byte[] data = TestInputs.text(100, 1);
        byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
        // The block header follows the 12-byte stream header: size byte, flags (0: one filter, no
        // size fields), LZMA2 filter id 0x21, property size 1, dictionary size code, padding, CRC32.
        int start = 12;
        int headerSize = ((block[start] & 0xFF) + 1) * 4;
        assertEquals(0, block[start + 1], "unexpected block header flags");
        assertEquals(0x21, block[start + 2], "unexpected filter");
        block[start + 4] = 34; // a 512 MiB dictionary
        CRC32 crc = new CRC32();
        crc.update(block, start, headerSize - 4);
        ByteBuffer.wrap(block, start + headerSize - 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
        CompressionFormatException e = assertThrows(CompressionFormatException.class,
                () -> c.decompress(ByteBuffer.wrap(block), ByteBuffer.allocate(data.length), data.length));
        assertInstanceOf(MemoryLimitException.class, e.getCause());
    }

    @Test
    void acceptsStockStreamsWithSmallDictionaries() throws IOException {
        byte[] data = TestInputs.mixed(200_000, 2);
        LZMA2Options options = new LZMA2Options(6);
        options.setDictSize(256 * 1024);
        for (int check : new int[] {XZ.CHECK_NONE, XZ.CHECK_CRC32, XZ.CHECK_CRC64, XZ.CHECK_SHA256}) {
            byte[] block = stockStream(data, options, check);
            ByteBuffer out = ByteBuffer.allocate(data.length);
            new XzCompressor(0).decompress(ByteBuffer.wrap(block), out, data.length);
            assertArrayEquals(data, out.array());
        }
    }

    @Test
    void rejectsConcatenatedStreams() {
        XzCompressor c = new XzCompressor(1);
        byte[] data = TestInputs.text(1000, 3);
        byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
        byte[] twice = new byte[2 * block.length];
        System.arraycopy(block, 0, twice, 0, block.length);
        System.arraycopy(block, 0, twice, block.length, block.length);
        CodecAssertions.assertRejected(c, twice, data.length, BufferKind.DIRECT, "two concatenated streams");
        CodecAssertions.assertRejected(c, twice, 2 * data.length, BufferKind.HEAP, "two concatenated streams");
    }
}
