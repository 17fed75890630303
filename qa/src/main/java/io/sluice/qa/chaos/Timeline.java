package io.sluice.qa.chaos;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The run as a picture: one lane of faults against one lane per client process, each operation a bar from invocation
 * to completion coloured by outcome (green ok, red failed, amber unknown), and the exported lines as a running count.
 */
final class Timeline
{
    private static final int WIDTH = 1400;
    private static final int LEFT = 130;
    private static final int LANE = 22;

    private Timeline()
    {
    }

    static String svg(final long seed, final History history, final List<Nemesis.Fault> faults, final List<Verdict> verdicts)
    {
        long end = 1;
        for (final Operation operation : history.operations())
        {
            end = Math.max(end, operation.invokedAt());
        }
        for (final Export export : history.exports())
        {
            end = Math.max(end, export.presentAt());
        }
        final Map<Integer, Integer> lanes = new TreeMap<>();
        history.operations().forEach(operation -> lanes.putIfAbsent(operation.process(), 0));
        int lane = 2;
        for (final Map.Entry<Integer, Integer> entry : lanes.entrySet())
        {
            entry.setValue(lane++);
        }
        final int exportsTop = (lane + 1) * LANE;
        final int height = exportsTop + 120 + verdicts.size() * 16;
        final double scale = (WIDTH - LEFT - 20) / (double)end;
        final StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " +
            "font-family=\"monospace\" font-size=\"11\">%n", WIDTH, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(String.format(Locale.ROOT, "<text x=\"8\" y=\"14\">seed %d: faults against operations, %d s</text>%n",
            seed, end / 1000));
        text(svg, 8, LANE + 14, "faults");
        for (final Nemesis.Fault fault : faults)
        {
            final double x = LEFT + fault.start() * scale;
            final double w = Math.max(1, ((fault.end() < 0 ? end : fault.end()) - fault.start()) * scale);
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">" +
                "<title>%s</title></rect>%n", x, LANE, w, LANE - 4, faultColour(fault.kind()), escape(fault.description())));
            text(svg, x + 2, LANE + 13, fault.kind());
        }
        for (final Map.Entry<Integer, Integer> entry : lanes.entrySet())
        {
            text(svg, 8, entry.getValue() * LANE + 14, processName(entry.getKey()));
        }
        for (final Operation operation : history.operations())
        {
            final int y = lanes.get(operation.process()) * LANE;
            final double x = LEFT + operation.invokedAt() * scale;
            final long completed = operation.completedAt() == Long.MAX_VALUE ? operation.invokedAt() + 50 : operation.completedAt();
            final double w = Math.max(1, (completed - operation.invokedAt()) * scale);
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
                x, y + 2, w, LANE - 8, outcomeColour(operation.outcome())));
        }
        text(svg, 8, exportsTop + 14, "exported lines");
        final StringBuilder path = new StringBuilder();
        final List<Export> sorted = history.exports().stream()
            .sorted(java.util.Comparator.comparingLong(Export::presentAt)).toList();
        for (int i = 0; i < sorted.size(); i += Math.max(1, sorted.size() / 400))
        {
            path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f",
                LEFT + sorted.get(i).presentAt() * scale, exportsTop + 80 - 80.0 * i / Math.max(1, sorted.size())));
        }
        if (path.length() > 0)
        {
            svg.append("<path d=\"").append(path).append("\" stroke=\"steelblue\" fill=\"none\"/>\n");
        }
        int y = exportsTop + 100;
        for (final Verdict verdict : verdicts)
        {
            svg.append(String.format(Locale.ROOT, "<text x=\"8\" y=\"%d\" fill=\"%s\">%s</text>%n", y,
                verdict.holds() ? "darkgreen" : "firebrick", escape(verdict.toString())));
            y += 16;
        }
        return svg.append("</svg>\n").toString();
    }

    private static String processName(final int process)
    {
        return switch (process)
        {
            case Workload.CONTROLLER -> "controller";
            case Workload.STATUS_READER -> "status reader";
            case Workload.BACKFILLER -> "backfiller";
            case Workload.HARNESS -> "harness";
            default -> "appender " + process;
        };
    }

    private static String faultColour(final String kind)
    {
        return switch (kind)
        {
            case "partition" -> "#e07b7b";
            case "one-way" -> "#e0b07b";
            case "gateway-cut" -> "#b07be0";
            case "kill" -> "#7b7b7b";
            case "sigstop" -> "#7bb0e0";
            default -> "#cccccc";
        };
    }

    private static String outcomeColour(final Outcome outcome)
    {
        return switch (outcome)
        {
            case OK -> "#4caf50";
            case FAILED -> "#e53935";
            case UNKNOWN -> "#ffb300";
        };
    }

    private static void text(final StringBuilder svg, final double x, final int y, final String text)
    {
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%s</text>%n", x, y, escape(text)));
    }

    private static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
