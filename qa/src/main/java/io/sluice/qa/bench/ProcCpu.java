package io.sluice.qa.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time from {@code /proc}: a process's (user + system of all its threads, GC and JIT included) and the machine's
 * (every core, every process). Shared by the idle and hosts-scale benchmarks.
 */
final class ProcCpu
{
    /** Clock ticks a second of {@code /proc}'s CPU times (USER_HZ: 100 on Linux). */
    static final double TICKS_PER_SECOND = 100.0;

    private ProcCpu()
    {
    }

    /** utime + stime of {@code /proc/<pid>/stat} in ticks (fields 14 and 15, counted after the parenthesised name). */
    static long ticks(final long pid) throws IOException
    {
        final String line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
        final String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** The machine's busy and total ticks so far, over every core ({@code /proc/stat}'s {@code cpu} line). */
    static long[] machineTicks() throws IOException
    {
        final String first = Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.UTF_8).get(0);
        final String[] fields = first.trim().split("\\s+");
        long total = 0;
        long idle = 0;
        for (int i = 1; i < fields.length && i <= 8; i++) // user nice system idle iowait irq softirq steal
        {
            final long value = Long.parseLong(fields[i]);
            total += value;
            if (i == 4 || i == 5)
            {
                idle += value;
            }
        }
        return new long[] {total - idle, total};
    }

    /** The 1-minute load average ({@code /proc/loadavg}). */
    static double loadAverage() throws IOException
    {
        return Double.parseDouble(Files.readString(Path.of("/proc/loadavg"), StandardCharsets.UTF_8).split(" ")[0]);
    }

    /** The process's thread count ({@code Threads:} of {@code /proc/<pid>/status}). */
    static int threads(final long pid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.UTF_8))
        {
            if (line.startsWith("Threads:"))
            {
                return Integer.parseInt(line.substring("Threads:".length()).trim());
            }
        }
        throw new IOException("no Threads: line in /proc/" + pid + "/status");
    }
}
