package io.betree.systest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@code main} class of the test classpath in a child JVM: the same {@code java} binary as
 * the running tests ({@code java.home}) and the same classpath ({@code java.class.path}), with
 * chosen JVM flags. Output goes to files (no pipe can fill up and block the child); a child that
 * outlives its timeout is asked for a thread dump (which lands in its stdout) and killed, together
 * with its descendants.
 */
final class ChildJvm {

    /** What a child did. */
    record Result(int exitCode, String stdout, String stderr, Duration elapsed, boolean timedOut) {

        /** The value of the first stdout line {@code "NAME value"}, or null. */
        String field(String name) {
            for (String line : stdout.split("\\R")) {
                if (line.startsWith(name + " ")) {
                    return line.substring(name.length() + 1).trim();
                }
            }
            return null;
        }

        /** Everything the child printed, for assertion messages. */
        String describe() {
            return "exit code " + exitCode + (timedOut ? " (killed after timeout)" : "") + " after "
                    + elapsed.toMillis() + " ms\n--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr;
        }
    }

    private ChildJvm() {
    }

    /** The {@code java} launcher of the running JVM. */
    static String javaBinary() {
        Path bin = Path.of(System.getProperty("java.home"), "bin");
        Path java = bin.resolve("java");
        return Files.isExecutable(java) ? java.toString() : bin.resolve("java.exe").toString();
    }

    /** The classpath of the running tests (Surefire puts the real classpath in java.class.path). */
    static String classPath() {
        String testClassPath = System.getProperty("surefire.test.class.path");
        String cp = System.getProperty("java.class.path");
        // With a manifest-only booter jar, java.class.path may name just that jar.
        if (testClassPath != null && !testClassPath.isEmpty() && (cp == null || !cp.contains("test-classes"))) {
            return testClassPath;
        }
        return cp;
    }

    /**
     * Asks a hung child for a thread dump (SIGQUIT: HotSpot prints every thread's stack on stdout)
     * so that the test report shows where it hung. Best effort; nothing happens where there is no
     * {@code kill} command.
     */
    private static void threadDump(Process p) {
        try {
            Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid())).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0) {
                Thread.sleep(1000); // let the JVM write the dump
            }
        } catch (IOException e) {
            // No dump then; the timeout is reported all the same.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code main} with {@code jvmArgs} and {@code args}, in {@code workDir}, killing it after
     * {@code timeout}.
     */
    static Result run(Class<?> main, List<String> jvmArgs, List<String> args, Path workDir, Duration timeout)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classPath());
        command.add(main.getName());
        command.addAll(args);
        Files.createDirectories(workDir);
        Path out = Files.createTempFile(workDir, "child-", ".out");
        Path err = Files.createTempFile(workDir, "child-", ".err");
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        long start = System.nanoTime();
        Process p = pb.start();
        boolean finished = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!finished) {
            threadDump(p);
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        int code = finished ? p.exitValue() : -1;
        return new Result(code, Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8), elapsed, !finished);
    }
}
