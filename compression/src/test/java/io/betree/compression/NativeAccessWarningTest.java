package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On JDK 24+ the JVM prints a warning to stderr when a JNI library is loaded without
 * {@code --enable-native-access}. The codecs without native code (none, xz, deflate) and LZ4
 * (which then runs in pure Java) must print nothing; this runs them in a fresh JVM, since the
 * warning is printed once per JVM. ZSTD exists only as JNI and is not checked.
 */
class NativeAccessWarningTest {

    private static final List<String> QUIET = List.of("none", "lz4", "xz", "deflate");

    @Test
    void quietCodecsPrintNothing(@TempDir Path dir) throws Exception {
        Result r = run(dir, List.of(), QUIET);
        assertEquals("", r.stderr, "stderr of a JVM using " + QUIET);
        assertEquals(0, r.exitCode, r.stdout);
        for (String name : QUIET) {
            assertTrue(r.stdout.contains(name + " ok"), r.stdout);
        }
        if (Runtime.version().feature() >= 24) {
            assertTrue(r.stdout.contains("lz4 factory LZ4Factory:JavaSafe"), r.stdout);
        }
    }

    @Test
    void lz4UsesJniSilentlyWithNativeAccessEnabled(@TempDir Path dir) throws Exception {
        Result r = run(dir, List.of("--enable-native-access=ALL-UNNAMED"), List.of("lz4"));
        assertEquals("", r.stderr);
        assertEquals(0, r.exitCode, r.stdout);
        assertTrue(r.stdout.contains("lz4 ok"), r.stdout);
        assertTrue(r.stdout.contains("lz4 factory LZ4Factory:JNI") || r.stdout.contains("lz4 factory LZ4Factory:JavaSafe"),
                r.stdout);
    }

    private record Result(int exitCode, String stdout, String stderr) {
    }

    private static Result run(Path dir, List<String> jvmOptions, List<String> codecs)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Child.class.getName());
        command.addAll(codecs);
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child JVM did not finish: " + command);
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** Looks each codec up by name and by id and round-trips a block through it. */
    static final class Child {

        private Child() {
        }

        public static void main(String[] args) {
            byte[] data = TestInputs.mixed(100_000, 41);
            for (String name : args) {
                BlockCompressor c = Compressors.create(name, Compressors.defaultLevel(name));
                ByteBuffer block = ByteBuffer.allocateDirect(c.maxCompressedLength(data.length));
                c.compress(ByteBuffer.wrap(data), block);
                block.flip();
                byte[] out = new byte[data.length];
                Compressors.forId(c.id()).decompress(block, ByteBuffer.wrap(out), data.length);
                assertArrayEquals(data, out, name);
                System.out.println(name + " ok");
            }
            if (List.of(args).contains("lz4")) {
                System.out.println("lz4 factory " + Lz4Compressor.FACTORY);
            }
        }
    }
}
