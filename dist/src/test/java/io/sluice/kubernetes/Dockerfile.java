package io.sluice.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code dist/docker/Dockerfile} makes of the image, read from its instructions without building it: the
 * files it copies in, its environment, user, working directory, volumes, exposed ports, entrypoint and command.
 * Knows only the instructions and forms that Dockerfile uses (and fails on the others), so that a change to it
 * cannot slip past the checks that compare it with the Kubernetes manifests. Reusable by qa tests.
 */
public final class Dockerfile
{
    public static final Path FILE = Manifests.DIRECTORY.resolveSibling("docker").resolve("Dockerfile");

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern ENV_PAIR = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S*)\\s*");
    private static final Pattern USER = Pattern.compile("(\\d+)(?::(\\d+))?");

    /** One instruction: its keyword in capitals, its arguments with line continuations joined, its first line. */
    public record Instruction(String keyword, String arguments, int line)
    {
    }

    private final List<Instruction> instructions;

    private Dockerfile(final List<Instruction> instructions)
    {
        this.instructions = List.copyOf(instructions);
    }

    public static Dockerfile load() throws IOException
    {
        return parse(Files.readString(FILE, StandardCharsets.UTF_8));
    }

    public static Dockerfile parse(final String text)
    {
        final List<Instruction> instructions = new ArrayList<>();
        final String[] lines = text.split("\n", -1);
        StringBuilder current = null;
        int start = 0;
        for (int i = 0; i < lines.length; i++)
        {
            final String line = lines[i].stripTrailing();
            if (current == null)
            {
                if (line.isBlank() || line.stripLeading().startsWith("#"))
                {
                    continue;
                }
                current = new StringBuilder();
                start = i + 1;
            }
            else if (line.stripLeading().startsWith("#"))
            {
                continue; // a comment line inside a continued instruction
            }
            if (line.endsWith("\\"))
            {
                current.append(line, 0, line.length() - 1).append(' ');
                continue;
            }
            current.append(line);
            final String instruction = current.toString().strip();
            final int space = instruction.indexOf(' ');
            if (space < 0)
            {
                throw new IllegalArgumentException("Dockerfile line " + start + ": instruction without arguments: " + instruction);
            }
            instructions.add(new Instruction(instruction.substring(0, space).toUpperCase(Locale.ROOT),
                instruction.substring(space + 1).strip(), start));
            current = null;
        }
        if (current != null)
        {
            throw new IllegalArgumentException("Dockerfile line " + start + ": continued past the end of the file");
        }
        return new Dockerfile(instructions);
    }

    public List<Instruction> instructions()
    {
        return instructions;
    }

    public List<Instruction> all(final String keyword)
    {
        return instructions.stream().filter(instruction -> instruction.keyword().equals(keyword)).toList();
    }

    /** The default of a build argument declared with {@code ARG NAME=default}. */
    public Optional<String> argDefault(final String name)
    {
        for (final Instruction arg : all("ARG"))
        {
            final int equals = arg.arguments().indexOf('=');
            if (equals > 0 && arg.arguments().substring(0, equals).equals(name))
            {
                return Optional.of(unquote(arg.arguments().substring(equals + 1)));
            }
        }
        return Optional.empty();
    }

    /** The image named by the only {@code FROM}. */
    public String from()
    {
        final List<Instruction> from = all("FROM");
        if (from.size() != 1)
        {
            throw new AssertionError("the Dockerfile has " + from.size() + " FROM instructions; these checks know one stage");
        }
        return from.get(0).arguments();
    }

    /**
     * The environment the Dockerfile sets, in order, with {@code ${NAME}} of an earlier {@code ENV} expanded;
     * a reference to the base image's variable (e.g. {@code ${PATH}}) is kept as written.
     */
    public Map<String, String> env()
    {
        final Map<String, String> env = new LinkedHashMap<>();
        for (final Instruction instruction : all("ENV"))
        {
            final Matcher pair = ENV_PAIR.matcher(instruction.arguments());
            int end = 0;
            while (pair.lookingAt())
            {
                env.put(pair.group(1), expand(unquote(pair.group(2)), env));
                end = pair.end();
                pair.region(end, instruction.arguments().length());
            }
            if (end != instruction.arguments().length())
            {
                throw new AssertionError("Dockerfile line " + instruction.line() + ": ENV not in KEY=VALUE form: "
                    + instruction.arguments());
            }
        }
        return env;
    }

    /** The entries of {@code PATH} the Dockerfile sets; {@code ${PATH}} stands for the base image's. */
    public List<String> path()
    {
        final String path = env().get("PATH");
        return path == null ? List.of("${PATH}") : List.of(path.split(":"));
    }

    /** {@code USER uid:gid}, numeric as Kubernetes' runAsNonRoot needs it; fails otherwise. */
    public long uid()
    {
        return Long.parseLong(user().group(1));
    }

    public long gid()
    {
        final Matcher user = user();
        if (user.group(2) == null)
        {
            throw new AssertionError("USER " + user.group() + " names no group");
        }
        return Long.parseLong(user.group(2));
    }

    private Matcher user()
    {
        final String user = last("USER").orElseThrow(() -> new AssertionError("the Dockerfile sets no USER: the image would run as root"));
        final Matcher matcher = USER.matcher(user);
        if (!matcher.matches())
        {
            throw new AssertionError("USER " + user + " is not numeric uid:gid");
        }
        return matcher;
    }

    public String workdir()
    {
        return last("WORKDIR").orElseThrow(() -> new AssertionError("the Dockerfile sets no WORKDIR"));
    }

    public List<String> volumes()
    {
        final List<String> volumes = new ArrayList<>();
        for (final Instruction volume : all("VOLUME"))
        {
            volumes.addAll(volume.arguments().startsWith("[") ? execForm(volume) : List.of(volume.arguments().split("\\s+")));
        }
        return volumes;
    }

    public List<Integer> exposedPorts()
    {
        final List<Integer> ports = new ArrayList<>();
        for (final Instruction expose : all("EXPOSE"))
        {
            for (final String port : expose.arguments().split("\\s+"))
            {
                ports.add(Integer.parseInt(port.replace("/tcp", "")));
            }
        }
        return ports;
    }

    /** Destination in the image to source in the build context, of every {@code COPY}. */
    public Map<String, String> copies()
    {
        final Map<String, String> copies = new LinkedHashMap<>();
        for (final Instruction copy : all("COPY"))
        {
            final List<String> words = List.of(copy.arguments().split("\\s+"));
            if (words.size() != 2 || words.get(0).startsWith("--"))
            {
                throw new AssertionError("Dockerfile line " + copy.line() + ": these checks know only COPY <file> <path>: "
                    + copy.arguments());
            }
            copies.put(words.get(1), words.get(0));
        }
        return copies;
    }

    /** Whether the image has this path: a file copied in, a directory above one, the working directory or a volume. */
    public boolean hasPath(final String path)
    {
        if (path.equals(workdir()) || volumes().contains(path))
        {
            return true;
        }
        return copies().keySet().stream().anyMatch(copied -> copied.equals(path) || copied.startsWith(path + "/"));
    }

    public List<String> entrypoint()
    {
        return execForm(last("ENTRYPOINT", "ENTRYPOINT"));
    }

    public List<String> cmd()
    {
        return execForm(last("CMD", "CMD"));
    }

    /**
     * The process a container of this image runs, as Kubernetes decides it: {@code command} replaces the
     * entrypoint (and drops the image's CMD), {@code args} replace CMD.
     */
    public List<String> commandLine(final Container container)
    {
        final List<String> commandLine = new ArrayList<>();
        final boolean command = container.getCommand() != null && !container.getCommand().isEmpty();
        commandLine.addAll(command ? container.getCommand() : entrypoint());
        if (container.getArgs() != null && !container.getArgs().isEmpty())
        {
            commandLine.addAll(container.getArgs());
        }
        else if (!command)
        {
            commandLine.addAll(cmd());
        }
        return commandLine;
    }

    private Instruction last(final String keyword, final String what)
    {
        final List<Instruction> found = all(keyword);
        if (found.isEmpty())
        {
            throw new AssertionError("the Dockerfile has no " + what);
        }
        return found.get(found.size() - 1);
    }

    private Optional<String> last(final String keyword)
    {
        final List<Instruction> found = all(keyword);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(found.size() - 1).arguments());
    }

    /** The JSON array of an exec-form instruction; the shell form would put a shell before the JVM as PID 1. */
    private static List<String> execForm(final Instruction instruction)
    {
        if (!instruction.arguments().startsWith("["))
        {
            throw new AssertionError("Dockerfile line " + instruction.line() + ": " + instruction.keyword()
                + " in shell form; the exec form (a JSON array) keeps the process PID 1: " + instruction.arguments());
        }
        final JsonNode array = JSON.readTree(instruction.arguments());
        final List<String> words = new ArrayList<>();
        array.forEach(word -> words.add(word.asString()));
        return words;
    }

    private static String expand(final String value, final Map<String, String> env)
    {
        final Matcher reference = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}").matcher(value);
        final StringBuilder expanded = new StringBuilder();
        while (reference.find())
        {
            final String known = env.get(reference.group(1));
            reference.appendReplacement(expanded, Matcher.quoteReplacement(known != null ? known : reference.group()));
        }
        reference.appendTail(expanded);
        return expanded.toString();
    }

    private static String unquote(final String value)
    {
        if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))
        {
            return value.substring(1, value.length() - 1).replaceAll("\\\\(.)", "$1");
        }
        return value;
    }
}
