package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import net.jpountz.lz4.LZ4Factory;
import org.junit.jupiter.api.Test;

/**
 * {@link Lz4Compressor} picks lz4-java's JNI or pure-Java build depending on the JVM and its
 * flags, so a file written under one must be readable under the other.
 */
class Lz4FactoriesTest {

    private static final int[] LEVELS = {0, 1, 9, 17};

    private static List<byte[]> inputs() {
        return List.of(new byte[0], new byte[] {42}, TestInputs.text(70_000, 31), TestInputs.random(70_000, 32),
                TestInputs.mixed(200_000, 33), new byte[100_000]);
    }

    /** lz4-java's JNI build; the test is skipped where this platform has none. */
    private static LZ4Factory jni() {
        LZ4Factory f = LZ4Factory.fastestInstance();
        // fastestInstance() falls back to the pure-Java build when the native library cannot load.
        assumeTrue(f != LZ4Factory.safeInstance() && f.toString().contains("JNI"), "no JNI build here: " + f);
        return f;
    }

    @Test
    void javaDecodesJniBlocks() {
        crossCheck(jni(), LZ4Factory.safeInstance());
    }

    @Test
    void jniDecodesJavaBlocks() {
        crossCheck(LZ4Factory.safeInstance(), jni());
    }

    private static void crossCheck(LZ4Factory writer, LZ4Factory reader) {
        for (int level : LEVELS) {
            Lz4Compressor w = new Lz4Compressor(level, writer);
            Lz4Compressor r = new Lz4Compressor(level, reader);
            for (byte[] data : inputs()) {
                for (BufferKind[] kinds : new BufferKind[][] {
                        {BufferKind.HEAP, BufferKind.DIRECT}, {BufferKind.DIRECT, BufferKind.HEAP_SLICE}}) {
                    String what = writer + " -> " + reader + ", level " + level + ", " + data.length + " bytes, "
                            + kinds[0] + "/" + kinds[1];
                    byte[] block = CodecAssertions.compress(w, data, kinds[0], kinds[1], w.maxCompressedLength(data.length));
                    byte[] out = CodecAssertions.decompress(r, block, data.length, kinds[1], kinds[0], data.length);
                    assertArrayEquals(data, out, what);
                }
            }
        }
    }

    /**
     * The choice itself, made once when {@link Lz4Compressor} initialises, is checked in a fresh JVM
     * by {@link NativeAccessWarningTest}: here another test may already have loaded a JNI library,
     * which on JDK 24+ enables native access for the class path after the warning.
     */
    @Test
    void usesJniOnlyWhereLoadingItPrintsNoWarning() throws Exception {
        boolean allowed = Lz4Compressor.nativeAccessAllowed();
        if (Runtime.version().feature() < 24) {
            assertTrue(allowed, "JDK 17-23 print no warning for JNI");
            assertSame(LZ4Factory.fastestInstance(), Lz4Compressor.FACTORY);
        } else {
            Object enabled = Module.class.getMethod("isNativeAccessEnabled").invoke(LZ4Factory.class.getModule());
            assertEquals(enabled, allowed);
            if (Lz4Compressor.FACTORY != LZ4Factory.safeInstance()) {
                assertTrue(allowed, "JNI build chosen without native access: " + Lz4Compressor.FACTORY);
            }
        }
    }
}
