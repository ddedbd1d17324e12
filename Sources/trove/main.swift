import TroveCLI
