package io.betree.systest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of {@link CrashRecoveryTest} that is meant to be killed with SIGKILL: it runs a crash
 * workload's {@code main} ({@link CrashWorkload}, {@link ConcurrentCrashWorkload}) with a small heap
 * and a quick-starting JIT. Such a main appends its reports to a protocol file, one unbuffered write
 * per line, so that every line that reached the kernel before the kill is still there afterwards;
 * its first line starts with {@code START }. Once the child is dead, {@link #kill()} reads the
 * protocol's complete lines; a last line without its newline was cut by the kill and is kept apart.
 *
 * <p>The child's stdout is drained too, and its {@code ACK } lines counted, only to compare with the
 * protocol file: the last lines written to a pipe by a process that is then SIGKILLed were observed
 * to go missing on the reading side, which is why the protocol file, not stdout, is the record.
 */
final class CrashChild {
    private final Process process;
    private final Thread reader;
    private final Path stderr;
    private final Path protocolFile;
    /** The complete lines of the protocol file, read by {@link #kill()}. */
    final List<String> lines = new ArrayList<>();
    /** A last protocol line cut by the kill (without its newline), or null. */
    String cutLine;
    /** Whether the child had died before {@link #kill()} was called. */
    boolean exitedOnItsOwn;
    /** {@code ACK } lines read from stdout, for comparison with the protocol file. */
    volatile long stdoutAcks;

    private CrashChild(Process process, Path stderr, Path protocolFile) {
        this.process = process;
        this.stderr = stderr;
        this.protocolFile = protocolFile;
        this.reader = new Thread(this::readStdout, "crash-child-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code main} with {@code args}; the workload's protocol file is {@code protocolFile}
     * (deleted first), its stderr goes to {@code stderr}.
     */
    static CrashChild start(Class<?> main, List<String> args, Path stderr, Path protocolFile) throws IOException {
        Files.deleteIfExists(protocolFile);
        List<String> command = new ArrayList<>(List.of(ChildJvm.javaBinary(), "-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", ChildJvm.classPath(), main.getName()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        return new CrashChild(p, stderr, protocolFile);
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    stdoutAcks++;
                }
            }
        } catch (IOException | RuntimeException e) {
            // The pipe breaks when the child dies.
        }
    }

    /** Whether the child reported START within {@code seconds}. */
    boolean awaitStart(int seconds) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (Files.exists(protocolFile) && Files.readString(protocolFile, StandardCharsets.US_ASCII)
                    .startsWith("START ")) {
                return true;
            }
            if (!process.isAlive()) {
                return false;
            }
            Thread.sleep(5);
        }
        return false;
    }

    /** Kills the child with SIGKILL (noting whether it had died already) and reads its protocol. */
    void kill() throws InterruptedException, IOException {
        exitedOnItsOwn = !process.isAlive();
        process.destroyForcibly();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new AssertionError("the child did not die after SIGKILL");
        }
        reader.join(60_000);
        if (!Files.exists(protocolFile)) {
            return;
        }
        String text = Files.readString(protocolFile, StandardCharsets.US_ASCII);
        int end = text.lastIndexOf('\n');
        if (end + 1 < text.length()) {
            cutLine = text.substring(end + 1);
        }
        for (String line : text.substring(0, end + 1).split("\n")) {
            if (!line.isEmpty()) {
                lines.add(line);
            }
        }
    }

    /** Whether it is alive, its exit code if not, and its stderr (cut at 20,000 characters). */
    String describe() {
        String err;
        try {
            err = Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            err = "(unreadable: " + e + ")";
        }
        if (err.length() > 20_000) {
            err = err.substring(0, 20_000) + "...";
        }
        return "alive " + process.isAlive() + (process.isAlive() ? "" : ", exit " + process.exitValue())
                + ", cut protocol line " + (cutLine == null ? "none" : "'" + cutLine + "'") + "\n--- stderr ---\n"
                + err;
    }
}
