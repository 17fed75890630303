package io.sluice.qa.chaos;

import io.sluice.qa.cluster.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A chaos run's outcome, written as {@code report.json} (issue 31's shape: seed, seconds, faults and operations by
 * kind, each property's verdict, the violations with their counterexamples) and {@code timeline.svg}.
 */
public record ChaosReport(long seed, long seconds, Map<String, Integer> faults, Map<String, Integer> operations,
    List<Verdict> verdicts, int exportedLines, Map<String, Long> coverage)
{
    public boolean holds()
    {
        return verdicts.stream().allMatch(Verdict::holds);
    }

    public static ChaosReport of(final long seed, final long seconds, final List<Nemesis.Fault> faults,
        final History history, final List<Verdict> verdicts)
    {
        final Map<String, Integer> faultCounts = new LinkedHashMap<>();
        faults.forEach(fault -> faultCounts.merge(fault.kind(), 1, Integer::sum));
        final Map<String, Integer> operationCounts = new LinkedHashMap<>();
        history.operations().forEach(operation -> operationCounts.merge(operation.kind(), 1, Integer::sum));
        return new ChaosReport(seed, seconds, faultCounts, operationCounts, verdicts, history.exports().size(),
            Checker.coverage(history));
    }

    public String toJson()
    {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("seed", seed);
        json.put("seconds", seconds);
        json.put("faults", faults);
        json.put("operations", operations);
        final Map<String, String> properties = new LinkedHashMap<>();
        final List<Map<String, String>> violations = new ArrayList<>();
        for (final Verdict verdict : verdicts)
        {
            properties.put(verdict.property(), verdict.holds() ? "ok" : "violated");
            if (!verdict.holds())
            {
                violations.add(Map.of("property", verdict.property(), "counterexample", verdict.counterexample()));
            }
        }
        json.put("properties", properties);
        json.put("violations", violations);
        return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json);
    }

    public void write(final Path directory, final History history, final List<Nemesis.Fault> faultList)
    {
        try
        {
            Files.createDirectories(directory);
            Files.writeString(directory.resolve("report.json"), toJson());
            Files.writeString(directory.resolve("timeline.svg"), Timeline.svg(seed, history, faultList, verdicts));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write the report in " + directory, ex);
        }
    }

    /** A few lines for a console. */
    public String summary()
    {
        final StringBuilder text = new StringBuilder("seed " + seed + ", " + seconds + " s: faults " + faults +
            ", operations " + operations + ", " + exportedLines + " exported lines").append(System.lineSeparator())
            .append("  judged: ").append(coverage).append(System.lineSeparator());
        verdicts.forEach(verdict -> text.append("  ").append(verdict).append(System.lineSeparator()));
        if (!holds())
        {
            text.append("  replay: bash qa/chaos.sh --seconds ").append(seconds).append(" --seed ").append(seed)
                .append(System.lineSeparator());
        }
        return text.toString();
    }
}
