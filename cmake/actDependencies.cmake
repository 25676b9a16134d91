# act's dependencies, all from Debian packages: libboost-dev (Hana), libfmt-dev, libz3-dev.
# Shared by the build tree and the installed package config.
include(CMakeFindDependencyMacro)
find_dependency(Boost 1.74)
find_dependency(fmt)
find_dependency(Z3)
