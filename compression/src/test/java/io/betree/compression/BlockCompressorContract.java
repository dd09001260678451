package io.betree.compression;

import static io.betree.compression.CodecAssertions.assertRejected;
import static io.betree.compression.CodecAssertions.assertRejectedOrTolerated;
import static io.betree.compression.CodecAssertions.assertRoundTrip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The behaviour every {@link BlockCompressor} must show. A subclass per codec and level supplies
 * the instance under test; tests of malformed input run under a generous timeout so that a hang
 * fails instead of stalling the build.
 */
public abstract class BlockCompressorContract {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** The compressor under test. */
    protected abstract BlockCompressor compressor();

    /**
     * Whether blocks carry a checksum, so that decompressing a corrupted block either fails or
     * reproduces the original bytes. Formats without one may silently return different bytes.
     */
    protected boolean checksummed() {
        return false;
    }

    /** Whether compressible input must shrink; only the identity codec answers {@code false}. */
    protected boolean shrinksCompressibleInput() {
        return true;
    }

    /** The compressor for the 16 MiB case; slow levels may substitute a faster level of the same codec. */
    protected BlockCompressor largeInputCompressor() {
        return compressor();
    }

    @Test
    void describesItself() {
        BlockCompressor c = compressor();
        assertTrue(c.id() >= 0 && c.id() <= 255, "id out of range: " + c.id());
        assertEquals(c.name().toLowerCase(Locale.ROOT), c.name());
        assertTrue(!c.name().isEmpty());
    }

    @Test
    void emptyInputRoundTrips() {
        for (BufferKind kind : List.of(BufferKind.HEAP, BufferKind.DIRECT)) {
            assertRoundTrip(compressor(), new byte[0], kind, kind);
        }
    }

    @Test
    void singleByteRoundTrips() {
        for (int b : new int[] {0, 1, 0x7F, 0x80, 0xFF}) {
            assertRoundTrip(compressor(), new byte[] {(byte) b}, BufferKind.HEAP, BufferKind.DIRECT);
        }
    }

    @Test
    void tinyInputsRoundTrip() {
        for (int n = 2; n <= 70; n++) {
            assertRoundTrip(compressor(), TestInputs.random(n, n), BufferKind.HEAP, BufferKind.HEAP);
            assertRoundTrip(compressor(), TestInputs.text(n, n), BufferKind.DIRECT, BufferKind.DIRECT);
        }
    }

    @Test
    void highlyCompressibleInputRoundTripsAndShrinks() {
        for (byte[] data : List.of(new byte[1 << 20], TestInputs.text(256 * 1024, 7))) {
            byte[] block = assertRoundTrip(compressor(), data, BufferKind.HEAP, BufferKind.HEAP);
            if (shrinksCompressibleInput()) {
                assertTrue(block.length < data.length / 2, "compressed " + data.length + " to " + block.length);
            }
        }
    }

    @Test
    void incompressibleInputStaysWithinBound() {
        for (int n : new int[] {100, 4096, 65536 + 17, 1 << 20}) {
            byte[] block = assertRoundTrip(compressor(), TestInputs.random(n, n), BufferKind.DIRECT, BufferKind.HEAP);
            assertTrue(block.length <= compressor().maxCompressedLength(n));
        }
    }

    @Test
    void largeInputRoundTrips() {
        BlockCompressor c = largeInputCompressor();
        assertEquals(compressor().id(), c.id(), "the large-input compressor must be the same codec");
        byte[] data = TestInputs.large();
        byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.DIRECT, c.maxCompressedLength(data.length));
        byte[] out = CodecAssertions.decompress(compressor(), block, data.length, BufferKind.DIRECT, BufferKind.HEAP, data.length);
        assertTrue(Arrays.equals(data, out), "16 MiB round trip differs");
    }

    static Stream<Arguments> bufferKinds() {
        List<Arguments> combos = new ArrayList<>();
        for (BufferKind src : BufferKind.values()) {
            for (BufferKind dst : BufferKind.values()) {
                if (dst != BufferKind.READ_ONLY) {
                    combos.add(Arguments.of(src, dst));
                }
            }
        }
        return combos.stream();
    }

    @ParameterizedTest
    @MethodSource("bufferKinds")
    void roundTripsBetweenAllBufferKinds(BufferKind src, BufferKind dst) {
        for (byte[] data : List.of(new byte[0], new byte[] {9}, TestInputs.text(10_000, 1),
                TestInputs.random(5_000, 2), TestInputs.mixed(200_000, 3))) {
            assertRoundTrip(compressor(), data, src, dst);
        }
    }

    @Test
    void usesOnlyTheRequiredPartOfLargerDestinations() {
        BlockCompressor c = compressor();
        byte[] data = TestInputs.mixed(50_000, 4);
        for (BufferKind kind : List.of(BufferKind.HEAP, BufferKind.HEAP_SLICE, BufferKind.DIRECT)) {
            byte[] block = CodecAssertions.compress(c, data, kind, kind, c.maxCompressedLength(data.length) + 1000);
            byte[] out = CodecAssertions.decompress(c, block, data.length, kind, kind, data.length + 1000);
            assertArrayEquals(data, out);
        }
    }

    @Test
    void rejectsWrongOriginalLength() {
        BlockCompressor c = compressor();
        for (byte[] data : List.of(new byte[0], new byte[] {5}, TestInputs.text(1000, 5), TestInputs.random(1000, 5))) {
            byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
            int n = data.length;
            for (int wrong : new int[] {n - 1, n + 1, 0, 2 * n + 100}) {
                if (wrong >= 0 && wrong != n) {
                    for (BufferKind kind : List.of(BufferKind.HEAP, BufferKind.DIRECT)) {
                        assertRejected(c, block, wrong, kind, "original length " + wrong + " instead of " + n);
                    }
                }
            }
        }
    }

    @Test
    void rejectsTruncatedInput() {
        BlockCompressor c = compressor();
        assertTimeoutPreemptively(TIMEOUT, () -> {
            Random rnd = new Random(11);
            for (byte[] data : List.of(new byte[0], TestInputs.text(20_000, 6), TestInputs.random(3_000, 6))) {
                byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
                List<Integer> lengths = new ArrayList<>(List.of(0, 1, block.length / 2, block.length - 1));
                for (int i = 0; i < 20; i++) {
                    lengths.add(rnd.nextInt(Math.max(1, block.length)));
                }
                for (int len : lengths) {
                    if (len >= 0 && len < block.length) {
                        BufferKind kind = (len & 1) == 0 ? BufferKind.HEAP : BufferKind.DIRECT;
                        assertRejected(c, Arrays.copyOf(block, len), data.length, kind, "block truncated to " + len + " bytes");
                    }
                }
            }
        });
    }

    @Test
    void rejectsTrailingBytes() {
        BlockCompressor c = compressor();
        byte[] data = TestInputs.text(5000, 8);
        byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
        for (byte[] tail : List.of(new byte[1], new byte[8], TestInputs.random(13, 8))) {
            byte[] input = Arrays.copyOf(block, block.length + tail.length);
            System.arraycopy(tail, 0, input, block.length, tail.length);
            assertRejected(c, input, data.length, BufferKind.DIRECT, tail.length + " trailing bytes");
        }
    }

    @Test
    void survivesBitFlips() {
        BlockCompressor c = compressor();
        assertTimeoutPreemptively(TIMEOUT, () -> {
            Random rnd = new Random(12);
            for (byte[] data : List.of(TestInputs.text(3_000, 9), TestInputs.random(500, 9), TestInputs.mixed(40_000, 9))) {
                byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
                int bits = block.length * 8;
                for (int i = 0; i < Math.min(bits, 600); i++) {
                    int bit = bits <= 600 ? i : rnd.nextInt(bits);
                    byte[] bad = block.clone();
                    bad[bit >>> 3] ^= (byte) (1 << (bit & 7));
                    BufferKind kind = (i & 1) == 0 ? BufferKind.HEAP : BufferKind.DIRECT;
                    assertRejectedOrTolerated(c, bad, data.length, data, checksummed(), kind, "bit " + bit + " flipped");
                }
            }
        });
    }

    @Test
    void survivesGarbage() {
        BlockCompressor c = compressor();
        assertTimeoutPreemptively(TIMEOUT, () -> {
            Random rnd = new Random(13);
            byte[] data = TestInputs.mixed(30_000, 10);
            byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(data.length));
            int[] lengths = {0, 1, 37, 4096, data.length, 1 << 20};
            for (int i = 0; i < 300; i++) {
                int originalLength = lengths[rnd.nextInt(lengths.length)];
                byte[] garbage = TestInputs.random(rnd.nextInt(2000), rnd.nextLong());
                if (i % 2 == 1) {
                    // A valid beginning followed by garbage reaches deeper into the decoder.
                    int keep = rnd.nextInt(block.length);
                    garbage = Arrays.copyOf(block, keep + 1 + garbage.length);
                    byte[] tail = TestInputs.random(garbage.length - keep, rnd.nextLong());
                    System.arraycopy(tail, 0, garbage, keep, tail.length);
                }
                BufferKind kind = (i & 2) == 0 ? BufferKind.HEAP : BufferKind.DIRECT;
                assertRejectedOrTolerated(c, garbage, originalLength, null, checksummed(), kind, "garbage #" + i);
            }
        });
    }

    @Test
    void respectsAndEnforcesMaxCompressedLength() {
        BlockCompressor c = compressor();
        for (int n : new int[] {0, 1, 100, 65536, 1 << 20, 1 << 30}) {
            assertTrue(c.maxCompressedLength(n) >= n, "bound below input size for " + n);
        }
        assertThrows(IllegalArgumentException.class, () -> c.maxCompressedLength(-1));
        byte[] data = TestInputs.random(1000, 14);
        ByteBuffer src = ByteBuffer.wrap(data);
        ByteBuffer dst = ByteBuffer.allocate(c.maxCompressedLength(data.length) - 1);
        assertThrows(IllegalArgumentException.class, () -> c.compress(src, dst));
        assertEquals(0, src.position());
        assertEquals(0, dst.position());
    }

    @Test
    void rejectsInvalidDecompressArguments() {
        BlockCompressor c = compressor();
        byte[] block = CodecAssertions.compress(c, new byte[100], BufferKind.HEAP, BufferKind.HEAP, c.maxCompressedLength(100));
        assertThrows(IllegalArgumentException.class, () -> c.decompress(ByteBuffer.wrap(block), ByteBuffer.allocate(100), -1));
        assertThrows(IllegalArgumentException.class, () -> c.decompress(ByteBuffer.wrap(block), ByteBuffer.allocate(99), 100));
    }

    @Test
    void isThreadSafe() throws Exception {
        BlockCompressor c = compressor();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = t;
                results.add(pool.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        assertRoundTrip(c, TestInputs.mixed(20_000, seed * 100 + i), BufferKind.HEAP, BufferKind.DIRECT);
                    }
                    return null;
                }));
            }
            for (Future<?> f : results) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
